package tensor

// RetainGrad makes the backward pass keep the gradient of t, a recorded
// result (a non-leaf), in t.Grad(), like PyTorch's retain_grad: the
// gradient flowing into t is added to t.Grad() when Backward passes
// through it. Without RetainGrad, Grad of a non-leaf stays nil: Backward
// fills only the Grad of leaves, the tensors created with RequiresGrad
// (PyTorch warns when .grad of a non-leaf is read; Go has no warnings, so
// this comment is the warning). RetainGrad must be called before Backward;
// on a leaf it does nothing, since leaves keep their gradients anyway. It
// returns t.
//
// RetainGrad panics if t does not require a gradient (as PyTorch raises
// "can't retain_grad on Tensor that has requires_grad=False").
func (t *Tensor) RetainGrad() *Tensor {
	if !t.requiresGrad {
		panicf("RetainGrad", "can't retain the gradient of a tensor of shape %v that does not require grad", t.layout.Shape)
	}
	if t.IsLeaf() || t.retainsGrad {
		return t
	}
	t.retainsGrad = true
	backward := t.node.Backward
	if backward == nil { // the graph was already run and released
		return t
	}
	// Read the gradient before the node's own closure takes it.
	t.node.Backward = func() {
		if g := t.cell.buf; g != nil {
			if t.grad == nil {
				t.grad = g.Clone()
			} else {
				t.grad = t.grad.Add(g)
			}
			escape(t.grad)
		}
		backward()
	}
	return t
}

// RetainsGrad reports whether t is a non-leaf whose gradient Backward keeps
// (see RetainGrad).
func (t *Tensor) RetainsGrad() bool { return t.retainsGrad }
