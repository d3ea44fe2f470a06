package tensor

import (
	"runtime"
	"slices"
	"testing"
	"weak"
)

// collected reports whether the storage behind w is gone after two
// collections.
func collected(w weak.Pointer[cpuStorage]) bool {
	runtime.GC()
	runtime.GC()
	return w.Value() == nil
}

// storageOf returns a weak pointer to t's CPU storage.
func storageOf(t *Tensor) weak.Pointer[cpuStorage] { return weak.Make(t.storage.(*cpuStorage)) }

// The recorded graph keeps what the derivatives read and nothing else:
// an intermediate that only feeds an Add, a MulScalar, a view or a
// rotation is garbage once the forward pass drops it, in a Scope or not,
// while the operands of a Mul stay until the backward pass; the gradients
// are those of the same graph with everything kept.
func TestGraphKeepsOnlySavedTensors(t *testing.T) {
	const n = 4096
	gen := NewGenerator(3)
	x := gen.Randn(4, 8, 8, n/64).RequiresGrad()
	cos, sin := gen.Randn(8, n/64), gen.Randn(8, n/64)
	b := gen.Randn(4, 8, 8, n/64)
	forward := func(keep func(string, *Tensor)) *Tensor {
		h := x.MulScalar(2)
		keep("MulScalar", h)
		h = h.Add(b)
		keep("Add", h)
		h = h.Transpose(1, 2)
		keep("Transpose", h)
		h = h.Reshape(4, 8, 8, n/64)
		keep("Reshape", h)
		h = ApplyRotary(h, cos, sin)
		keep("ApplyRotary", h)
		h = h.Softmax(-1)
		return h.Mul(h).Sum()
	}
	want := func() *Tensor {
		var all []*Tensor
		loss := forward(func(_ string, h *Tensor) { all = append(all, h) })
		loss.Backward()
		runtime.KeepAlive(all)
		g := x.Grad().Clone()
		x.ZeroGrad()
		return g
	}()
	for _, scoped := range []bool{false, true} {
		ws := map[string]weak.Pointer[cpuStorage]{}
		keep := func(op string, h *Tensor) {
			if op != "Transpose" { // a view of the Add's output
				ws[op] = storageOf(h)
			}
		}
		var loss *Tensor
		if scoped {
			loss = Scope(func() *Tensor { return forward(keep) })
		} else {
			loss = forward(keep)
		}
		for op, w := range ws {
			if !collected(w) {
				t.Errorf("scoped=%v: the output of %s is still alive before the backward pass", scoped, op)
			}
		}
		loss.Backward()
		if g, w := x.Grad().Float32s(), want.Float32s(); !slices.Equal(g, w) {
			t.Errorf("scoped=%v: the gradient differs from the one with every intermediate kept", scoped)
		}
		x.ZeroGrad()
	}
	// the operands of a Mul are saved
	h := x.MulScalar(3)
	w := storageOf(h)
	loss := h.Mul(h).Sum()
	h = nil
	if collected(w) {
		t.Fatal("the operand of a Mul was collected before the backward pass")
	}
	loss.Backward()
}

// A product keeps an operand only where the other operand's gradient reads
// it: the input of a product with a frozen weight (LoRA's base) is garbage
// once the forward pass drops it, and so is the frozen weight's
// counterpart; the input of a product with a trained weight stays; the
// gradients are those of a graph with everything kept.
func TestMatMulKeepsOnlyWhatGradientsRead(t *testing.T) {
	gen := NewGenerator(5)
	x := gen.Randn(6, 32).RequiresGrad()
	frozen := gen.Randn(16, 32)
	trained := gen.Randn(16, 32).RequiresGrad()
	for _, tc := range []struct {
		name string
		w    *Tensor
		kept bool
	}{{"frozen", frozen, false}, {"trained", trained, true}} {
		run := func(keep bool) ([]float32, []float32) {
			h := x.MulScalar(2) // the product's input, an intermediate
			st := storageOf(h)
			loss := h.MatMul(tc.w.T()).Mul(gen.Randn(6, 16)).Sum()
			if !keep {
				h = nil
				if got := collected(st); got == tc.kept {
					t.Errorf("%s weight: the product's input collected before the backward pass = %v, want %v", tc.name, got, !tc.kept)
				}
			}
			loss.Backward()
			runtime.KeepAlive(h)
			gx := x.Grad().Clone().Float32s()
			x.ZeroGrad()
			var gw []float32
			if tc.w.Grad() != nil {
				gw = tc.w.Grad().Clone().Float32s()
				tc.w.ZeroGrad()
			}
			return gx, gw
		}
		gen = NewGenerator(9)
		wantX, wantW := run(true)
		gen = NewGenerator(9)
		gotX, gotW := run(false)
		if !slices.Equal(gotX, wantX) || !slices.Equal(gotW, wantW) {
			t.Errorf("%s weight: the gradients differ from the graph's with its input kept", tc.name)
		}
	}
}

// A Function's recorded closure holds its outputs' pending gradients, not
// the outputs: a Checkpoint's output that only feeds a product with a
// frozen weight is garbage once the forward pass drops it, and the
// gradients are those of the same graph with the output kept.
func TestFunctionKeepsNoOutputs(t *testing.T) {
	gen := NewGenerator(7)
	x := gen.Randn(6, 32).RequiresGrad()
	w := gen.Randn(16, 32)
	frozen := gen.Randn(8, 16)
	run := func(keep bool) []float32 {
		h := Checkpoint(func(in []*Tensor) *Tensor { return in[0].MatMul(w.T()).Sigmoid() }, x)
		st := storageOf(h)
		loss := h.MatMul(frozen.T()).Sum()
		if !keep {
			h = nil
			if !collected(st) {
				t.Error("the Checkpoint's output is still alive before the backward pass")
			}
		}
		loss.Backward()
		runtime.KeepAlive(h)
		g := x.Grad().Clone().Float32s()
		x.ZeroGrad()
		return g
	}
	if want, got := run(true), run(false); !slices.Equal(got, want) {
		t.Error("the gradient differs from the one with the Checkpoint's output kept")
	}
}
