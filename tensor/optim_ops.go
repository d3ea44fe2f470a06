package tensor

import "slices"

// AdamWUpdate applies one AdamW step (PyTorch's rule, see AdamWStep) in
// place to param and its moment estimates m and v, given grad, using the
// device's fused AdamW kernel. It is not recorded. param, m and v must be
// contiguous Float32 tensors of one shape that own their storage from the
// start (as parameters and optimizer state do); grad must have the same
// shape. AdamWUpdate panics otherwise, and, like every in-place
// operation (see Fill_), if param, m or v requires a gradient while the
// calling goroutine records: pass param.Detach(), a view of the same
// storage that does not require a gradient.
func AdamWUpdate(param, grad, m, v *Tensor, step AdamWStep) {
	const op = "AdamWUpdate"
	for _, t := range []*Tensor{param, m, v} {
		checkInPlace(op, t)
	}
	mustFloat(op, param, grad, m, v)
	sameDevice(op, param, grad, m, v)
	for _, t := range []*Tensor{grad, m, v} {
		if !slices.Equal(t.layout.Shape, param.layout.Shape) {
			panicf(op, "param of shape %v needs grad, m and v of the same shape, got %v", param.layout.Shape, t.layout.Shape)
		}
	}
	for _, t := range []*Tensor{param, m, v} {
		if !t.IsContiguous() || t.layout.Offset != 0 {
			panicf(op, "param, m and v must be contiguous from the start of their storage, got shape %v strides %v offset %d", t.layout.Shape, t.layout.Strides, t.layout.Offset)
		}
	}
	if !grad.IsContiguous() || grad.layout.Offset != 0 {
		grad = grad.Detach().Clone()
	}
	if n := param.Numel(); n > 0 {
		param.backend.AdamW(param.storage, grad.storage, m.storage, v.storage, n, step)
	}
}
