package tensor

import (
	"fmt"
	"slices"

	"github.com/wickml/wick/autograd"
)

// RequiresGrad marks a leaf tensor as needing a gradient: operations on it
// are recorded, and Backward accumulates into its Grad, which has t's
// dtype (a BFloat16 leaf's gradients are BFloat16, each accumulation
// rounded, as in PyTorch). It returns t, and panics with an *Error for an
// Int64 tensor.
func (t *Tensor) RequiresGrad() *Tensor {
	if !t.DType().IsFloatingPoint() {
		panicf("RequiresGrad", "only floating-point tensors (float32, bfloat16, float16) can require gradients, got %s", t.DType())
	}
	if t.node != nil && !t.node.IsLeaf() {
		return t
	}
	t.requiresGrad = true
	if t.node == nil {
		t.node = autograd.NewLeaf(shapeString(t.layout.Shape))
	}
	return t
}

// SetRequiresGrad sets or clears a leaf's gradient requirement.
func (t *Tensor) SetRequiresGrad(on bool) *Tensor {
	if on {
		return t.RequiresGrad()
	}
	if t.node != nil && !t.node.IsLeaf() {
		panicf("SetRequiresGrad", "can only change the gradient requirement of leaf tensors; use Detach on a result")
	}
	t.requiresGrad = false
	t.node = nil
	return t
}

// IsRequiringGrad reports whether t requires a gradient (a leaf marked with
// RequiresGrad, or the recorded result of an operation on one).
func (t *Tensor) IsRequiringGrad() bool { return t.requiresGrad }

// IsLeaf reports whether t was created by the user rather than recorded as
// the result of a differentiable operation.
func (t *Tensor) IsLeaf() bool { return t.node == nil || t.node.IsLeaf() }

// Grad returns the gradient accumulated by Backward into a leaf, or into a
// non-leaf after RetainGrad; otherwise nil.
func (t *Tensor) Grad() *Tensor { return t.grad }

// SetGrad replaces the accumulated gradient (nil clears it).
func (t *Tensor) SetGrad(g *Tensor) {
	if g != nil && !slices.Equal(g.layout.Shape, t.layout.Shape) {
		panicf("SetGrad", "gradient shape %v does not match tensor shape %v", g.layout.Shape, t.layout.Shape)
	}
	t.grad = g
	escape(g)
}

// ZeroGrad clears the accumulated gradient (like PyTorch's set_to_none).
func (t *Tensor) ZeroGrad() { t.grad = nil }

// Detach returns a tensor sharing t's storage that is not recorded and does
// not require a gradient.
func (t *Tensor) Detach() *Tensor {
	return newTensor(t.backend, t.storage, t.Layout())
}

// GradFn returns the recorded node that produced t, or nil for leaves and
// tensors produced without recording.
func (t *Tensor) GradFn() *autograd.Node {
	if t.node == nil || t.node.IsLeaf() {
		return nil
	}
	return t.node
}

// Node returns t's node on the tape (the producing operation, or the leaf
// node of a tensor that requires a gradient), or nil.
func (t *Tensor) Node() *autograd.Node { return t.node }

// Backward computes the gradient of the one-element tensor t with respect
// to every leaf that requires a gradient, accumulating into their Grad.
// The recorded graph is released afterwards.
func (t *Tensor) Backward() {
	if t.Numel() != 1 {
		panicf("Backward", "grad can be implicitly created only for scalar outputs; got shape %v (use BackwardWith)", t.layout.Shape)
	}
	t.BackwardWith(OnesLike(t))
}

// BackwardWith runs the backward pass seeded with grad, which must have t's
// shape.
func (t *Tensor) BackwardWith(grad *Tensor) {
	if grad == nil {
		panicf("BackwardWith", "the gradient is nil; pass a tensor of the output's shape %v (or call Backward on a scalar)", t.layout.Shape)
	}
	if !t.requiresGrad {
		panicf("Backward", "tensor of shape %v does not require grad and has no grad_fn", t.layout.Shape)
	}
	if !slices.Equal(grad.layout.Shape, t.layout.Shape) {
		panicf("Backward", "gradient shape %v does not match tensor shape %v", grad.layout.Shape, t.layout.Shape)
	}
	if t.node.IsLeaf() {
		t.accumulate(grad.Detach())
		return
	}
	if t.node.Released() {
		panicf("Backward", "trying to backward through the graph a second time; the graph was released by the first Backward")
	}
	for _, n := range autograd.Order(t.node) {
		if n.Released() {
			panicf("Backward", "trying to backward through the graph a second time: the %s node (output shape %s) was released by an earlier Backward; recompute the forward pass", n.Op, n.Label)
		}
	}
	t.cell.buf = grad.Detach()
	runBackward(t.node)
}

// record attaches the result out to the tape when any input requires a
// gradient and recording is on for the calling goroutine. backward receives
// out's gradient and must call accumulate on the inputs it differentiates;
// autograd.Run calls it with recording off.
func record(op string, out *Tensor, inputs []*Tensor, backward func(g *Tensor)) {
	var nodes []*autograd.Node
	for _, in := range inputs {
		if in != nil && in.requiresGrad {
			nodes = append(nodes, in.node)
		}
	}
	if len(nodes) == 0 || !autograd.Enabled() {
		return
	}
	out.requiresGrad = true
	out.name = op
	// the closure holds out's pending gradient, not out: out's storage
	// stays alive only if backward saved it
	cell := &gradCell{}
	out.cell = cell
	out.node = autograd.NewNode(op, shapeString(out.layout.Shape), nodes, func() {
		g := cell.buf
		cell.buf = nil
		if g == nil {
			return
		}
		a := currentArena()
		if a == nil {
			backward(g)
			return
		}
		// g is consumed here: what it and the closure's temporaries
		// leave unreferenced is reused by the next nodes
		a.unref(g)
		mark := len(a.stores)
		backward(g)
		a.sweep(mark, g)
	})
}

// gradCell holds the gradient flowing into a non-leaf during Backward,
// until the node that produced the non-leaf consumes it.
type gradCell struct{ buf *Tensor }

// A gradSink is where the backward pass of a recorded operation sends the
// gradient of one of its inputs: the input itself when it is a leaf (whose
// gradient lives on it), else the input's pending-gradient cell. It keeps
// the input's shape, dtype and backend but not its storage, so that a
// backward closure holding sinks keeps alive only the tensors it saved on
// purpose: an intermediate that no derivative needs (the input of an Add,
// of a view, of a rotation) is garbage once the forward pass drops it, as
// PyTorch's graph keeps only saved tensors.
type gradSink struct {
	leaf         *Tensor   // a leaf that requires a gradient, or nil
	cell         *gradCell // a non-leaf's pending gradient, or nil
	shape        []int
	dt           DType
	backend      Backend
	requiresGrad bool
}

// sink returns the gradSink of t.
func (t *Tensor) sink() gradSink {
	s := gradSink{shape: t.layout.Shape, dt: t.DType(), backend: t.backend, requiresGrad: t.requiresGrad}
	if t.requiresGrad {
		if t.node.IsLeaf() {
			s.leaf = t
		} else {
			s.cell = t.cell
		}
	}
	return s
}

// zeros returns a zero tensor of the sink's shape, dtype and backend.
func (s gradSink) zeros() *Tensor { return empty("zeros", s.backend, s.dt, s.shape) }

// accumulate adds a gradient flowing into t (summing away broadcast
// dimensions). It does nothing if t does not require a gradient.
func (t *Tensor) accumulate(g *Tensor) {
	if !t.requiresGrad || g == nil {
		return
	}
	if t.node.IsLeaf() {
		t.accumulateLeaf(g)
		return
	}
	t.sink().accumulate(g)
}

// accumulate adds a gradient flowing into the sink's tensor, like
// Tensor.accumulate.
func (s gradSink) accumulate(g *Tensor) {
	if !s.requiresGrad || g == nil {
		return
	}
	if s.leaf != nil {
		s.leaf.accumulateLeaf(g)
		return
	}
	if !slices.Equal(g.layout.Shape, s.shape) {
		g = g.sumTo(s.shape)
	}
	if g.DType() != s.dt {
		// a gradient in another float dtype: cast to the input's, as
		// PyTorch's engine casts each gradient to its input's dtype
		g = g.ToDType(s.dt)
	}
	a := currentArena()
	if s.cell.buf == nil {
		s.cell.buf = g
		a.ref(g)
		return
	}
	old := s.cell.buf
	s.cell.buf = old.Add(g)
	a.ref(s.cell.buf)
	a.unref(old)
	a.drop(old)
}

// accumulateLeaf adds g into the gradient of the leaf t.
func (t *Tensor) accumulateLeaf(g *Tensor) {
	if !slices.Equal(g.layout.Shape, t.layout.Shape) {
		g = g.sumTo(t.layout.Shape)
	}
	if g.DType() != t.DType() {
		g = g.ToDType(t.DType()) // as for a non-leaf (gradSink.accumulate)
	}
	if !t.accumulating.CompareAndSwap(false, true) {
		panicf("Backward", "two goroutines are accumulating into the gradient of the same leaf of shape %v at once; backpropagate into shared parameters from one goroutine at a time", t.layout.Shape)
	}
	defer t.accumulating.Store(false)
	if t.gradInto != nil && t.accumulateInto(g) {
		return
	}
	switch {
	case t.grad != nil:
		t.grad = t.grad.Add(g)
	case currentArena().ownsWhole(g):
		// a temporary of the pass that nothing else views: the
		// gradient takes it rather than a copy of it, as PyTorch's
		// AccumulateGrad takes a gradient no one else holds
		t.grad = g.Detach()
	default:
		t.grad = g.Clone()
	}
	escape(t.grad)
}

// sumTo sums t over the dimensions that were broadcast to reach its shape
// from shape.
func (t *Tensor) sumTo(shape []int) *Tensor {
	nd := t.Dim()
	if len(shape) > nd {
		panic(fmt.Sprintf("tensor: sumTo: cannot reduce %v to %v", t.layout.Shape, shape))
	}
	var dims []int
	lead := nd - len(shape)
	for d := range nd {
		if d < lead || (shape[d-lead] == 1 && t.layout.Shape[d] != 1) {
			dims = append(dims, d)
		}
	}
	out := t
	if len(dims) > 0 {
		out = t.SumKeepDim(dims...)
	}
	return out.Reshape(shape...)
}
