package tensor

import (
	"fmt"
	"math"
	"slices"

	"github.com/wickml/wick/autograd"
)

// GradCheckOptions tune GradCheck. The zero value selects the defaults,
// which suit float32 functions whose inputs are of order one.
type GradCheckOptions struct {
	// Eps is the step of the central differences (default 1e-2: float32
	// has about 7 significant digits, so much smaller steps drown the
	// difference in rounding error).
	Eps float32
	// Atol and Rtol bound the accepted difference between an analytic
	// derivative a and its numeric estimate n:
	// |a − n| ≤ Atol + Rtol·max(|a|, |n|). Defaults: 1e-3 and 5e-3, which
	// catch a derivative that is 1% off while leaving room for float32
	// rounding in f.
	Atol, Rtol float64
	// Seed selects the fixed random weighting that reduces f's output to
	// a scalar (default 1).
	Seed uint64
}

// GradCheck compares the gradients that Backward computes for f with
// central finite differences, and returns an error describing the first
// mismatch (naming the input, the element, the analytic and the numeric
// values) or nil when every derivative agrees.
//
// f is called with tensors that view the storage of inputs (so
// non-contiguous inputs stay non-contiguous) and must return a Float32
// tensor of any shape; the output is reduced to the scalar Σ wᵢ·outᵢ with
// fixed random weights wᵢ, so every output element is checked. Every
// Float32 input is differentiated; Int64 inputs (indices, targets) are passed
// through unchanged. Each element is perturbed in place by ±Eps and restored
// afterwards, so an input must not have elements that share storage (as
// Expand makes) nor share elements with another input, and f must be
// deterministic (call ManualSeed in f before a training-mode Dropout)
// and smooth within ±Eps of the inputs (keep inputs away from the kinks of
// ReLU, Abs, Max and the like).
//
// GradCheck must not be called inside autograd.NoGrad.
func GradCheck(f func(inputs []*Tensor) *Tensor, inputs []*Tensor, opts GradCheckOptions) error {
	if opts.Eps == 0 {
		opts.Eps = 1e-2
	}
	if opts.Atol == 0 {
		opts.Atol = 1e-3
	}
	if opts.Rtol == 0 {
		opts.Rtol = 5e-3
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if !autograd.Enabled() {
		return fmt.Errorf("tensor: GradCheck: gradient recording is off (called inside autograd.NoGrad)")
	}
	leaves := make([]*Tensor, len(inputs))
	for i, in := range inputs {
		if in == nil {
			return fmt.Errorf("tensor: GradCheck: input %d is nil", i)
		}
		leaves[i] = in.Detach()
		if in.DType() != Float32 {
			continue
		}
		if !distinctElements(in.layout) {
			return fmt.Errorf("tensor: GradCheck: input %d (shape %v, strides %v) has elements that share storage; pass a Contiguous copy", i, in.layout.Shape, in.layout.Strides)
		}
		leaves[i].RequiresGrad()
	}

	// analytic gradients
	out, err := callChecked(f, leaves)
	if err != nil {
		return err
	}
	gen := NewGenerator(opts.Seed)
	weights := make([]float32, out.Numel())
	for j := range weights {
		w := float32(0.5 + gen.Float64())
		if gen.IntN(2) == 0 {
			w = -w
		}
		weights[j] = w
	}
	if out.requiresGrad {
		wt := newTensor(out.backend, out.backend.FromFloat32s(weights), contiguousLayout(out.layout.Shape))
		out.Mul(wt).Sum().Backward()
	}
	outShape := out.Shape()

	// numeric gradients, one element at a time
	eval := func() (float64, error) {
		var y *Tensor
		var err error
		autograd.NoGrad(func() { y, err = callChecked(f, leaves) })
		if err != nil {
			return 0, err
		}
		if !slices.Equal(y.layout.Shape, outShape) {
			return 0, fmt.Errorf("tensor: GradCheck: f returned shape %v, then %v for perturbed inputs", outShape, y.layout.Shape)
		}
		var s float64
		for j, v := range y.Float32s() {
			s += float64(weights[j]) * float64(v)
		}
		return s, nil
	}
	var first error
	mismatches := 0
	for i, x := range leaves {
		if x.DType() != Float32 {
			continue
		}
		var analytic []float32
		if x.grad != nil {
			analytic = x.grad.Float32s()
		} else {
			analytic = make([]float32, x.Numel())
		}
		offsets := x.layout.Offsets()
		for j, off := range offsets {
			orig := x.readAt(off)
			up, down := orig+opts.Eps, orig-opts.Eps
			x.writeAt(off, up)
			fp, err := eval()
			if err != nil {
				x.writeAt(off, orig)
				return err
			}
			x.writeAt(off, down)
			fm, err := eval()
			x.writeAt(off, orig)
			if err != nil {
				return err
			}
			// divide by the step actually taken after float32 rounding
			numeric := (fp - fm) / (float64(up) - float64(down))
			a := float64(analytic[j])
			diff := math.Abs(a - numeric)
			tol := opts.Atol + opts.Rtol*max(math.Abs(a), math.Abs(numeric))
			if !(diff <= tol) {
				mismatches++
				if first == nil {
					first = fmt.Errorf("input %d (shape %v) element %v: analytic gradient %.6g, numeric %.6g (difference %.3g > tolerance %.3g)",
						i, x.layout.Shape, unflatten(j, x.layout.Shape), a, numeric, diff, tol)
				}
			}
		}
	}
	if first != nil {
		more := ""
		if mismatches > 1 {
			more = fmt.Sprintf(" (%d mismatching elements in all)", mismatches)
		}
		return fmt.Errorf("tensor: GradCheck: %w%s", first, more)
	}
	return nil
}

// callChecked calls f, turning an *Error panic and a bad result into an
// error.
func callChecked(f func([]*Tensor) *Tensor, in []*Tensor) (out *Tensor, err error) {
	if e := Catch(func() { out = f(in) }); e != nil {
		return nil, fmt.Errorf("tensor: GradCheck: f panicked: %w", e)
	}
	if out == nil {
		return nil, fmt.Errorf("tensor: GradCheck: f returned nil")
	}
	if out.DType() != Float32 {
		return nil, fmt.Errorf("tensor: GradCheck: f returned a %s tensor of shape %v; want float32", out.DType(), out.layout.Shape)
	}
	return out, nil
}

// distinctElements reports whether no two elements of l share a storage
// position.
func distinctElements(l Layout) bool {
	seen := make(map[int]bool, l.Numel())
	for _, o := range l.Offsets() {
		if seen[o] {
			return false
		}
		seen[o] = true
	}
	return true
}

// unflatten turns a row-major position into an index of shape.
func unflatten(j int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = j % shape[d]
			j /= shape[d]
		}
	}
	return idx
}

func elementLayout(off int) Layout { return Layout{Shape: []int{1}, Strides: []int{1}, Offset: off} }

func (t *Tensor) readAt(off int) float32 {
	return t.backend.Float32s(t.storage, elementLayout(off))[0]
}

func (t *Tensor) writeAt(off int, v float32) {
	t.backend.Fill(t.storage, elementLayout(off), float64(v))
}
