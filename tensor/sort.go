package tensor

// Sort returns the elements of t sorted along dim, ascending (or
// descending), and the Int64 indices of their places in t
// (torch.sort(stable=True)): values = t.Gather(dim, indices). The sort is
// stable in either direction: equal elements keep their order. NaN sorts
// above every number (last ascending, first descending), and -0 equals +0,
// as in PyTorch. Both results are contiguous. The gradient flows back to
// the place each value came from. Sort panics with an *Error if t is not
// a float tensor or dim is out of range.
func (t *Tensor) Sort(dim int, descending bool) (values, indices *Tensor) {
	const op = "Sort"
	if dt := t.DType(); is16(dt) {
		v, i := t.ToDType(Float32).Sort(dim, descending)
		return rounded16(v, dt), i
	}
	mustFloat(op, t)
	d := indexDim(op, t, dim)
	checkAlloc(op, Float32, t.layout.Shape) // before moveToLast's copy
	if t.Dim() == 0 {
		v, i := t.Reshape(1).Sort(0, descending)
		return v.Reshape(), i.Reshape()
	}
	x, back := t.moveToLast(d)
	cols := x.layout.Shape[x.Dim()-1]
	rows := x.Numel() / max(cols, 1)
	vals := emptyOut(op, t.backend, Float32, x.layout.Shape)
	idx := empty(op, t.backend, Int64, x.layout.Shape)
	if x.Numel() > 0 {
		t.backend.Sort(vals.storage, idx.storage, x.storage, rows, cols, descending)
	}
	record(op, vals, []*Tensor{x}, func(g *Tensor) {
		dx := empty(op, t.backend, Float32, x.layout.Shape)
		last := x.Dim() - 1
		scatterAddAt(dx, last, x.layout.Shape, idx.Ints(), g)
		x.accumulate(dx)
	})
	return back(vals).Contiguous(), back(idx).Contiguous()
}

// TopK returns the k largest (or, with largest false, smallest) elements
// of t along dim and the Int64 indices of their places in t (torch.topk).
// The values are those PyTorch returns, in order (largest first, or
// smallest first), NaN counting as the largest. Among equal values Wick
// returns the lower index first; PyTorch's CPU kernel does not promise an
// order among ties, so its indices can differ there while the values
// agree. With sorted false the results come in the same sorted order
// (PyTorch's order is then unspecified). Both results are contiguous; the
// gradient flows back to the places the values came from. TopK panics with
// an *Error if t is not a float tensor, dim is out of range or k is not in
// [0, t.Size(dim)].
func (t *Tensor) TopK(k, dim int, largest, sorted bool) (values, indices *Tensor) {
	const op = "TopK"
	mustFloating(op, t)
	d := indexDim(op, t, dim)
	size := 1
	if t.Dim() > 0 {
		size = t.layout.Shape[d]
	}
	if k < 0 || k > size {
		panicf(op, "k %d is out of range for dimension %d of size %d (shape %v)", k, d, size, t.layout.Shape)
	}
	v, i := t.Sort(d, largest)
	if t.Dim() == 0 {
		return v, i
	}
	return v.Narrow(d, 0, k).Contiguous(), i.Narrow(d, 0, k).Contiguous()
}
