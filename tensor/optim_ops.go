package tensor

import (
	"math"
	"slices"
)

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

// GlobalNorm returns the L2 norm of all the elements of ts taken together,
// √(Σ x²), as a 0-d Float32 tensor on their device: the global gradient
// norm of gradient clipping. The squares are summed in float64. On a
// backend that implements Normer (the CUDA backend) it is one pass over all
// the tensors, the way PyTorch's multi-tensor kernel computes it, instead
// of one reduction per tensor; reading the result (Item) is what waits for
// the device. It is not recorded. GlobalNorm panics if ts is empty, if a
// tensor is not Float32 or if they are not all on one device.
func GlobalNorm(ts []*Tensor) *Tensor {
	const op = "GlobalNorm"
	if len(ts) == 0 {
		panicf(op, "expected at least one tensor")
	}
	mustFloat(op, ts...)
	sameDevice(op, ts...)
	srcs := make([]Storage, 0, len(ts))
	ns := make([]int, 0, len(ts))
	for _, t := range ts {
		if t.Numel() == 0 {
			continue
		}
		if !t.IsContiguous() || t.layout.Offset != 0 {
			t = t.Detach().Clone()
		}
		srcs = append(srcs, t.storage)
		ns = append(ns, t.Numel())
	}
	b := ts[0].backend
	out := empty("GlobalNorm", b, Float32, nil)
	if nb, ok := b.(Normer); ok {
		nb.GlobalNorm(out.storage, srcs, ns)
		return out
	}
	var acc float64
	for i, s := range srcs {
		for _, v := range b.Float32s(s, contiguousLayout([]int{ns[i]})) {
			acc += float64(v) * float64(v)
		}
	}
	b.Fill(out.storage, out.layout, float64(float32(math.Sqrt(acc))))
	return out
}
