package tensor

import "slices"

// Cat concatenates tensors along dim; all other dims must match.
func Cat(ts []*Tensor, dim int) *Tensor {
	if len(ts) == 0 {
		panicf("Cat", "expected a non-empty list of tensors")
	}
	first := ts[0]
	d := normDimOf("Cat", dim, first.layout.Shape)
	shape := first.Shape()
	total := 0
	for i, u := range ts {
		sameDevice("Cat", first, u)
		if u.DType() != first.DType() {
			panicf("Cat", "expected all tensors to have dtype %s, tensor %d has %s", first.DType(), i, u.DType())
		}
		if u.Dim() != first.Dim() {
			panicf("Cat", "tensor %d has shape %v, expected %d dims like %v", i, u.layout.Shape, first.Dim(), first.layout.Shape)
		}
		for j := range shape {
			if j != d && u.layout.Shape[j] != shape[j] {
				panicf("Cat", "sizes of tensors must match except in dimension %d: got %v and %v", d, first.layout.Shape, u.layout.Shape)
			}
		}
		var ok bool
		if total, ok = addInts(total, u.layout.Shape[d]); !ok {
			panicf("Cat", "the sizes along dimension %d add up to more than an int can count (tensor %d has shape %v)", d, i, u.layout.Shape)
		}
	}
	shape[d] = total
	out := empty("Cat", first.backend, first.DType(), shape)
	off := 0
	for _, u := range ts {
		n := u.layout.Shape[d]
		first.backend.Copy(out.storage, out.narrowView(d, off, n).layout, u.storage, u.layout)
		off += n
	}
	sinks := make([]gradSink, len(ts)) // the parts' data are not needed
	for i, u := range ts {
		sinks[i] = u.sink()
	}
	record("Cat", out, ts, func(g *Tensor) {
		off := 0
		for _, u := range sinks {
			n := u.shape[d]
			if u.requiresGrad {
				u.accumulate(g.narrowView(d, off, n))
			}
			off += n
		}
	})
	return out
}

// Stack joins tensors of equal shape along a new dim.
func Stack(ts []*Tensor, dim int) *Tensor {
	if len(ts) == 0 {
		panicf("Stack", "expected a non-empty list of tensors")
	}
	d := normDim("Stack", dim, ts[0].Dim()+1)
	us := make([]*Tensor, len(ts))
	for i, u := range ts {
		if !slices.Equal(u.layout.Shape, ts[0].layout.Shape) {
			panicf("Stack", "stack expects each tensor to be equal size, but got %v at entry 0 and %v at entry %d", ts[0].layout.Shape, u.layout.Shape, i)
		}
		us[i] = u.Unsqueeze(d)
	}
	return Cat(us, d)
}

// Split cuts t along dim into pieces of size (the last may be smaller),
// as views.
func (t *Tensor) Split(size, dim int) []*Tensor {
	d := normDimOf("Split", dim, t.layout.Shape)
	if size <= 0 {
		panicf("Split", "split size must be positive, got %d", size)
	}
	n := t.layout.Shape[d]
	var out []*Tensor
	for s := 0; s < n; s += size {
		out = append(out, t.Narrow(d, s, min(size, n-s)))
	}
	if n == 0 {
		out = append(out, t)
	}
	return out
}

// Chunk cuts t along dim into n nearly equal views (like torch.chunk).
func (t *Tensor) Chunk(n, dim int) []*Tensor {
	if n <= 0 {
		panicf("Chunk", "number of chunks must be positive, got %d", n)
	}
	d := normDimOf("Chunk", dim, t.layout.Shape)
	size := (t.layout.Shape[d] + n - 1) / n
	return t.Split(max(size, 1), d)
}
