package tensor

import "github.com/wickml/wick/autograd"

// In-place operations (CopyFrom, Fill_, NormalInit, UniformInit and their
// With forms, AdamWUpdate) write a tensor's storage without recording
// anything. On a tensor that requires a gradient while the calling
// goroutine records, that would silently break differentiation: a leaf
// would change under the operations that already read it, and a recorded
// result would change without its gradient knowing. PyTorch raises "a leaf
// Variable that requires grad is being used in an in-place operation";
// Wick panics the same way. Inside autograd.NoGrad the write is allowed, as
// in PyTorch, and so is a write through a Detach()ed view, which does not
// require a gradient (PyTorch's p.detach().copy_(...)): that is how
// parameters are initialised, loaded and updated.

// checkInPlace panics if op, an in-place operation, would write t while t
// requires a gradient and recording is on for the calling goroutine.
func checkInPlace(op string, t *Tensor) {
	if !t.requiresGrad || !autograd.Enabled() {
		return
	}
	if t.IsLeaf() {
		panicf(op, "a leaf tensor of shape %v that requires grad is being used in an in-place operation; run it inside autograd.NoGrad or write through t.Detach()", t.layout.Shape)
	}
	panicf(op, "the tensor of shape %v is the recorded result of %s and requires grad; in-place operations are not recorded, so its gradient would be wrong: use an out-of-place operation, or write inside autograd.NoGrad or through t.Detach()", t.layout.Shape, t.node.Op)
}
