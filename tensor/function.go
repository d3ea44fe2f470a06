package tensor

import (
	"slices"
	"strings"

	"github.com/wickml/wick/autograd"
)

// Function is a differentiable operation written by the user, Wick's
// torch.autograd.Function. Forward computes the outputs with any code:
// tensor operations, or raw float32 slices read with Float32s and turned
// back into tensors with NewOn. Backward receives the gradient of each
// output and returns the gradient of each input. Because both are written
// with tensors, a Function runs on every device its code runs on.
//
//	square := &tensor.Function{
//		Name: "Square",
//		Forward: func(ctx *tensor.FunctionContext, in []*tensor.Tensor) []*tensor.Tensor {
//			ctx.SaveForBackward(in[0])
//			return []*tensor.Tensor{in[0].Mul(in[0])}
//		},
//		Backward: func(ctx *tensor.FunctionContext, grads []*tensor.Tensor) []*tensor.Tensor {
//			x := ctx.SavedTensors()[0]
//			return []*tensor.Tensor{grads[0].Mul(x).MulScalar(2)}
//		},
//	}
//	y := square.Apply(x)
//
// Forward runs with recording off on the calling goroutine (as
// torch.autograd.Function's forward does) and receives views of the inputs
// that do not require gradients; whatever it computes is not recorded.
// When an input requires a gradient and the calling goroutine records, the
// outputs are recorded as one operation whose backward is Backward. Backward
// runs during the backward pass, with recording off, so the gradients it
// returns are not themselves differentiable (no double backward).
//
// A Function value holds no per-call state: one value may be applied many
// times, on many goroutines at once; per-call state goes in the
// FunctionContext.
type Function struct {
	// Name names the operation in panics, in the printed grad_fn
	// (<NameBackward0>) and in autograd graph drawings. Empty means
	// "Function".
	Name string
	// Forward computes the outputs from the inputs (nil inputs are passed
	// as nil). It must return at least one non-nil tensor and may not
	// return one tensor twice. Only Float32 outputs are differentiable.
	Forward func(ctx *FunctionContext, inputs []*Tensor) []*Tensor
	// Backward receives one gradient per output, in Forward's order and
	// with each output's shape (a zero tensor for an output that received
	// no gradient, nil for a non-Float32 output), and returns one gradient
	// per input: a Float32 tensor of the input's shape and device, or nil
	// for an input that needs none (see FunctionContext.NeedsInputGrad).
	// It may be nil for a Function that is never differentiated.
	Backward func(ctx *FunctionContext, grads []*Tensor) []*Tensor
}

// FunctionContext carries what one application of a Function keeps between
// Forward and Backward, like the ctx of torch.autograd.Function.
type FunctionContext struct {
	saved  []*Tensor
	needs  []bool
	values map[string]any
}

// SaveForBackward keeps tensors for Backward (ctx.save_for_backward). They
// are released after the backward pass.
func (c *FunctionContext) SaveForBackward(ts ...*Tensor) { c.saved = append(c.saved, ts...) }

// SavedTensors returns the tensors given to SaveForBackward, in order
// (ctx.saved_tensors).
func (c *FunctionContext) SavedTensors() []*Tensor { return c.saved }

// NeedsInputGrad reports whether input i requires a gradient in this
// application (ctx.needs_input_grad[i]); Backward may return nil for the
// others. It panics if i is out of range.
func (c *FunctionContext) NeedsInputGrad(i int) bool {
	if i < 0 || i >= len(c.needs) {
		panicf("FunctionContext.NeedsInputGrad", "input %d is out of range for %d inputs", i, len(c.needs))
	}
	return c.needs[i]
}

// Set keeps a non-tensor value under key for Backward (like assigning
// ctx.key in PyTorch).
func (c *FunctionContext) Set(key string, v any) {
	if c.values == nil {
		c.values = map[string]any{}
	}
	c.values[key] = v
}

// Get returns the value Set under key, or nil.
func (c *FunctionContext) Get(key string) any { return c.values[key] }

func (f *Function) name() string {
	if f.Name == "" {
		return "Function"
	}
	return f.Name
}

// Apply calls the Function on inputs and returns its single output,
// recorded for Backward when an input requires a gradient (see Function).
// It panics if Forward is nil or does not return exactly one tensor, and in
// the cases ApplyN panics.
func (f *Function) Apply(inputs ...*Tensor) *Tensor {
	outs := f.ApplyN(inputs...)
	if len(outs) != 1 {
		panicf(f.name(), "Apply expects Forward to return one output, got %d; use ApplyN", len(outs))
	}
	return outs[0]
}

// ApplyN calls the Function on inputs and returns all of its outputs,
// recorded as one operation for Backward when an input requires a gradient
// and the calling goroutine records. It panics if Forward is nil or returns
// no tensor, a nil tensor or one tensor twice, if Backward is nil when the
// outputs have to be recorded, and (during the backward pass) if Backward
// returns the wrong number of gradients or a gradient whose dtype, shape or
// device does not match its input.
func (f *Function) ApplyN(inputs ...*Tensor) []*Tensor {
	op := f.name()
	if f.Forward == nil {
		panicf(op, "Function has no Forward")
	}
	ctx := &FunctionContext{needs: make([]bool, len(inputs))}
	views := make([]*Tensor, len(inputs))
	var nodes []*autograd.Node
	for i, in := range inputs {
		if in == nil {
			continue
		}
		views[i] = in.Detach()
		if in.requiresGrad {
			ctx.needs[i] = true
			nodes = append(nodes, in.node)
		}
	}
	record := len(nodes) > 0 && autograd.Enabled()
	if !record {
		clear(ctx.needs)
	}
	var outs []*Tensor
	untracked(func() { autograd.NoGrad(func() { outs = f.Forward(ctx, views) }) })
	if len(outs) == 0 {
		panicf(op, "Forward returned no outputs")
	}
	for i, o := range outs {
		if o == nil {
			panicf(op, "Forward returned a nil output %d", i)
		}
		if slices.Contains(outs[:i], o) {
			panicf(op, "Forward returned output %d (shape %v) twice; return a Clone", i, o.layout.Shape)
		}
	}
	if !record {
		return outs
	}
	if f.Backward == nil {
		panicf(op, "Function has no Backward, but input requires grad; differentiate it or call it inside autograd.NoGrad")
	}
	// An output may be an input's view returned as is: give every output a
	// tensor of its own so that recording it leaves the input alone.
	labels := make([]string, 0, len(outs))
	for i, o := range outs {
		outs[i] = o.Detach()
		labels = append(labels, shapeString(o.layout.Shape))
	}
	var diff []*Tensor // the outputs that carry gradients
	for _, o := range outs {
		if o.DType() == Float32 {
			diff = append(diff, o)
		}
	}
	if len(diff) == 0 {
		return outs
	}
	// the closure holds each output's pending gradient, not the output:
	// an output's storage stays alive only if Forward saved it (as
	// record does for the built-in operations; a Checkpoint's output is
	// garbage once the forward pass drops it)
	sinks := make([]gradSink, len(outs))
	for i, o := range outs {
		if o.DType() == Float32 {
			o.cell = &gradCell{}
			sinks[i] = gradSink{cell: o.cell, shape: o.layout.Shape, dt: o.DType(), backend: o.backend}
		}
	}
	node := autograd.NewNode(op, strings.Join(labels, " "), nodes, func() {
		grads := make([]*Tensor, len(sinks))
		some := false
		for i, s := range sinks {
			if s.cell == nil {
				continue
			}
			g := s.cell.buf
			s.cell.buf = nil
			if g != nil {
				some = true
			} else {
				g = s.zeros()
			}
			grads[i] = g
		}
		if !some {
			return
		}
		// user code: what it is given and what it allocates may be kept
		for _, g := range grads {
			escape(g)
		}
		var gin []*Tensor
		untracked(func() { gin = f.Backward(ctx, grads) })
		ctx.saved, ctx.values = nil, nil // freed, as PyTorch frees saved tensors
		if len(gin) != len(inputs) {
			panicf(op, "Backward returned %d gradients for %d inputs", len(gin), len(inputs))
		}
		for i, g := range gin {
			in := inputs[i]
			if g == nil || in == nil || !in.requiresGrad {
				continue
			}
			switch {
			case g.DType() != Float32:
				panicf(op, "Backward returned a %s gradient for input %d; want float32", g.DType(), i)
			case !slices.Equal(g.layout.Shape, in.layout.Shape):
				panicf(op, "Backward returned a gradient of shape %v for input %d of shape %v", g.layout.Shape, i, in.layout.Shape)
			case g.Device() != in.Device():
				panicf(op, "Backward returned a gradient on %s for input %d on %s", g.Device(), i, in.Device())
			}
			in.accumulate(g)
		}
	})
	for _, o := range diff {
		o.requiresGrad = true
		o.name = op
		o.node = node
	}
	return outs
}
