package tensor

// Gather, Scatter and ScatterAdd along a dimension (torch.gather,
// torch.scatter, torch.scatter_add). They are composed from the backend's
// Gather and ScatterAdd primitives with rows of one element: the index is
// read on the host (its bounds are checked there, so a bad index panics
// with an *Error instead of faulting a kernel) and turned into the storage
// offset of every element that moves.

// indexDim normalises dim for op on t (a 0-d t takes dim 0 or -1).
func indexDim(op string, t *Tensor, dim int) int {
	if t.Dim() == 0 {
		return normDim(op, dim, 1)
	}
	return normDimOf(op, dim, t.layout.Shape)
}

// checkIndex checks index for op along dim d of self (and against src when
// it is not nil): an Int64 tensor with self's number of dims, no larger
// than self in every other dim and no larger than src in any, holding
// values in [0, size of dim d). It returns the values in row-major order.
func checkIndex(op string, self *Tensor, d int, index, src *Tensor) []int {
	if index.DType() != Int64 {
		panicf(op, "index must be an int64 tensor, got %s%v", index.DType(), index.layout.Shape)
	}
	is := index.layout.Shape
	if index.Dim() != self.Dim() {
		panicf(op, "index %v must have as many dims as the input %v", is, self.layout.Shape)
	}
	if src != nil && src.Dim() != self.Dim() {
		panicf(op, "src %v must have as many dims as the input %v", src.layout.Shape, self.layout.Shape)
	}
	for k, n := range is {
		if k != d && n > self.layout.Shape[k] {
			panicf(op, "index %v is larger than the input %v in dimension %d (only dimension %d may differ)", is, self.layout.Shape, k, d)
		}
		if src != nil && n > src.layout.Shape[k] {
			panicf(op, "index %v is larger than src %v in dimension %d", is, src.layout.Shape, k)
		}
	}
	size := 1
	if self.Dim() > 0 {
		size = self.layout.Shape[d]
	}
	vals := index.Ints()
	for _, v := range vals {
		if v < 0 || v >= size {
			panicf(op, "index %d is out of bounds for dimension %d with size %d (input shape %v, index shape %v)", v, d, size, self.layout.Shape, is)
		}
	}
	return vals
}

// offsetsAt returns, for each position of shape (row-major), the storage
// offset in l of the element at the same coordinates, except that
// coordinate d is vals[position] when vals is not nil.
func offsetsAt(l Layout, shape []int, d int, vals []int) []int64 {
	n := numel(shape)
	out := make([]int64, n)
	idx := make([]int, len(shape))
	for p := range n {
		o := l.Offset
		for k, i := range idx {
			if k == d && vals != nil {
				i = vals[p]
			}
			o += i * l.Strides[k]
		}
		out[p] = int64(o)
		for k := len(idx) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return out
}

// gatherAt returns the n elements of t at the given storage offsets as a
// contiguous 1-D tensor (not recorded).
func gatherAt(op string, t *Tensor, offs []int64) *Tensor {
	out := empty(op, t.backend, Float32, []int{len(offs)})
	if len(offs) > 0 {
		t.backend.Gather(out.storage, t.storage, t.backend.FromInt64s(offs), len(offs), 1)
	}
	return out
}

// Gather returns the elements of t picked along dim by the Int64 index
// (torch.gather): for a 3-d t and dim 1,
//
//	out[i][j][k] = t[i][index[i][j][k]][k]
//
// The result has index's shape; index has t's number of dims and is no
// larger than t in the other dims. The gradient adds into the picked
// elements (an element picked twice gets both). Gather panics with an
// *Error if t is not a float tensor, index is not Int64, the shapes do not
// fit or an index is outside [0, t.Size(dim)).
func (t *Tensor) Gather(dim int, index *Tensor) *Tensor {
	const op = "Gather"
	if is16(t.DType()) {
		return widened(t, func(x *Tensor) *Tensor { return x.Gather(dim, index) })
	}
	mustFloat(op, t)
	sameDevice(op, t, index)
	d := indexDim(op, t, dim)
	vals := checkIndex(op, t, d, index, nil)
	is := index.layout.Shape
	checkAlloc(op, Float32, is)
	out := gatherAt(op, t, offsetsAt(t.layout, is, d, vals)).View(is...)
	ts := t.sink()
	record(op, out, []*Tensor{t}, func(g *Tensor) {
		dt := empty(op, ts.backend, Float32, ts.shape)
		scatterAddAt(dt, d, is, vals, g)
		ts.accumulate(dt)
	})
	return out
}

// scatterAddAt adds the elements of src at the positions of shape is into
// the fresh contiguous dst at the positions index (vals) names along dim d.
func scatterAddAt(dst *Tensor, d int, is []int, vals []int, src *Tensor) {
	n := numel(is)
	if n == 0 {
		return
	}
	v := gatherAt("ScatterAdd", src, offsetsAt(src.layout, is, -1, nil))
	offs := dst.backend.FromInt64s(offsetsAt(dst.layout, is, d, vals))
	dst.backend.ScatterAdd(dst.storage, offs, v.storage, n, 1)
}

// srcGrad returns the gradient of a scatter's src of shape srcShape: the
// output gradient g at the positions the index (vals, shape is) names, in
// the src positions of the same coordinates, zero elsewhere.
func srcGrad(op string, g *Tensor, d int, is []int, vals []int, srcShape []int) *Tensor {
	v := gatherAt(op, g, offsetsAt(g.layout, is, d, vals))
	out := empty(op, g.backend, Float32, srcShape)
	if v.Numel() > 0 {
		place := Layout{Shape: cloneInts(is), Strides: ContiguousStrides(srcShape)}
		g.backend.Copy(out.storage, place, v.storage, contiguousLayout(is))
	}
	return out
}

// scatterArgs checks the arguments of Scatter and ScatterAdd and returns
// the normalised dim and the index values.
func (t *Tensor) scatterArgs(op string, dim int, index, src *Tensor) (int, []int) {
	mustFloat(op, t, src)
	sameDevice(op, t, index, src)
	d := indexDim(op, t, dim)
	vals := checkIndex(op, t, d, index, src)
	checkAlloc(op, Float32, t.layout.Shape)
	return d, vals
}

// ScatterAdd returns a copy of t with the elements of src added along dim
// at the positions the Int64 index names (torch.scatter_add, out of
// place): for a 3-d t and dim 1,
//
//	out[i][index[i][j][k]][k] += src[i][j][k]
//
// for every position (i, j, k) of index, which has t's number of dims, is
// no larger than src in any dim and no larger than t in the other dims;
// repeated positions add up. The gradient is the output's for t, and for
// src the output's gradient at the positions index names (zero where src is
// larger than index). ScatterAdd panics with an *Error like Gather.
func (t *Tensor) ScatterAdd(dim int, index, src *Tensor) *Tensor {
	const op = "ScatterAdd"
	if is16(t.DType()) || is16(src.DType()) {
		// float32 inside (repeated positions add up in float32), the
		// result rounded once to t's dtype
		s := widenedOrNil(src)
		return widened(t, func(x *Tensor) *Tensor { return x.ScatterAdd(dim, index, s) })
	}
	d, vals := t.scatterArgs(op, dim, index, src)
	is := index.Shape()
	out := empty(op, t.backend, Float32, t.layout.Shape)
	t.backend.Copy(out.storage, out.layout, t.storage, t.layout)
	scatterAddAt(out, d, is, vals, src)
	record(op, out, []*Tensor{t, src}, func(g *Tensor) {
		t.accumulate(g)
		if src.requiresGrad {
			src.accumulate(srcGrad(op, g, d, is, vals, src.layout.Shape))
		}
	})
	return out
}

// Scatter returns a copy of t with elements of src written along dim at
// the positions the Int64 index names (torch.scatter, out of place): for a
// 3-d t and dim 1,
//
//	out[i][index[i][j][k]][k] = src[i][j][k]
//
// with index shaped as for ScatterAdd. Where index names one position more
// than once, the last of them in index's row-major order wins, as on
// PyTorch's CPU (PyTorch leaves it unspecified, and its GPU kernels may
// differ). The gradient for t is the output's with the written positions
// zeroed; for src it is the output's gradient at the positions index names,
// overwritten or not (PyTorch's rule). Scatter panics with an *Error like
// Gather.
func (t *Tensor) Scatter(dim int, index, src *Tensor) *Tensor {
	const op = "Scatter"
	if is16(t.DType()) || is16(src.DType()) {
		s := widenedOrNil(src)
		return widened(t, func(x *Tensor) *Tensor { return x.Scatter(dim, index, s) })
	}
	d, vals := t.scatterArgs(op, dim, index, src)
	is := index.Shape()
	n := numel(t.layout.Shape)
	// for each output element, the storage offset in src of the value
	// written there (the last writer), and whether one is
	dense := contiguousLayout(t.layout.Shape)
	dstOffs := offsetsAt(dense, is, d, vals)
	srcOffs := offsetsAt(src.layout, is, -1, nil)
	from := make([]int64, n)
	mask := make([]float32, n)
	for p, o := range dstOffs {
		from[o] = srcOffs[p]
		mask[o] = 1
	}
	written := newTensor(t.backend, t.backend.FromFloat32s(mask), dense)
	var out *Tensor
	if len(srcOffs) == 0 {
		out = t.Detach().Clone()
	} else {
		for o := range from {
			if mask[o] == 0 {
				from[o] = srcOffs[0] // any element: Where discards it
			}
		}
		picked := gatherAt(op, src, from).View(t.layout.Shape...)
		out = Where(written, picked, t.Detach())
	}
	record(op, out, []*Tensor{t, src}, func(g *Tensor) {
		t.accumulate(g.MaskedFill(written, 0))
		if src.requiresGrad {
			src.accumulate(srcGrad(op, g, d, is, vals, src.layout.Shape))
		}
	})
	return out
}
