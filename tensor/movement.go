package tensor

import (
	"slices"
)

// view returns a tensor sharing t's storage with layout l, recorded with
// the given backward.
func (t *Tensor) view(op string, l Layout, backward func(g *Tensor)) *Tensor {
	autocastNoteView(t)
	out := newTensor(t.backend, t.storage, l)
	record(op, out, []*Tensor{t}, backward)
	return out
}

// inferShape resolves a single -1 in shape against numel n. It panics
// with an *Error for op if shape has another negative dimension, if the
// product of its dimensions overflows int, or if it does not hold n
// elements.
func inferShape(op string, shape []int, n int, from []int) []int {
	out := cloneInts(shape)
	neg := -1
	known, nonzero := 1, 1 // products of the known dims, and of the nonzero ones
	for i, d := range out {
		switch {
		case d == -1:
			if neg >= 0 {
				panicf(op, "only one dimension can be inferred, got shape %v", shape)
			}
			neg = i
		case d < 0:
			panicf(op, "invalid shape dimension %d in %v", d, shape)
		case d == 0:
			known = 0
		default:
			// a product that wrapped around could match n by accident
			p, ok := mulInts(nonzero, d)
			if !ok {
				panicf(op, "shape %v has more elements than an int can count (the product of its dimensions overflows)", shape)
			}
			nonzero = p
		}
	}
	if known != 0 {
		known = nonzero
	}
	if neg >= 0 {
		if known == 0 || n%known != 0 {
			panicf(op, "shape %v is invalid for input of size %d (shape %v)", shape, n, from)
		}
		out[neg] = n / known
	} else if known != n {
		panicf(op, "shape %v is invalid for input of size %d (shape %v)", shape, n, from)
	}
	return out
}

// viewStrides returns strides that let a tensor with (shape, strides) be
// viewed as newShape without copying, or false if none exist (PyTorch's rule).
func viewStrides(shape, strides, newShape []int) ([]int, bool) {
	newStrides := make([]int, len(newShape))
	if numel(shape) == 0 || len(shape) == 0 {
		return ContiguousStrides(newShape), true
	}
	viewD := len(newShape) - 1
	chunkBase := strides[len(strides)-1]
	tensorNumel, viewNumel := 1, 1
	for td := len(shape) - 1; td >= 0; td-- {
		tensorNumel *= shape[td]
		if td == 0 || (shape[td-1] != 1 && strides[td-1] != tensorNumel*chunkBase) {
			for viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1) {
				newStrides[viewD] = viewNumel * chunkBase
				viewNumel *= newShape[viewD]
				viewD--
			}
			if viewNumel != tensorNumel {
				return nil, false
			}
			if td > 0 {
				chunkBase = strides[td-1]
				tensorNumel, viewNumel = 1, 1
			}
		}
	}
	if viewD != -1 {
		return nil, false
	}
	return newStrides, true
}

// View returns t with a new shape, sharing storage; one dimension may be -1.
// It panics if shape does not hold t's elements (a dimension below -1, a
// product that overflows int, another count) or if the layout cannot be
// viewed that way (use Reshape).
func (t *Tensor) View(shape ...int) *Tensor {
	ns := inferShape("View", shape, t.Numel(), t.layout.Shape)
	st, ok := viewStrides(t.layout.Shape, t.layout.Strides, ns)
	if !ok {
		panicf("View", "view size %v is not compatible with input tensor's size %v and stride %v; use Reshape", ns, t.layout.Shape, t.layout.Strides)
	}
	orig, ts := t.layout.Shape, t.sink()
	return t.view("View", Layout{Shape: ns, Strides: st, Offset: t.layout.Offset}, func(g *Tensor) {
		ts.accumulate(g.Reshape(orig...))
	})
}

// Reshape returns t with a new shape (one dimension may be -1), sharing
// storage when the layout allows and copying otherwise. It panics if shape
// does not hold t's elements, like View.
func (t *Tensor) Reshape(shape ...int) *Tensor {
	ns := inferShape("Reshape", shape, t.Numel(), t.layout.Shape)
	if slices.Equal(ns, t.layout.Shape) {
		return t
	}
	if _, ok := viewStrides(t.layout.Shape, t.layout.Strides, ns); ok {
		return t.View(ns...)
	}
	return t.Clone().View(ns...)
}

// Flatten merges dimensions start..end (inclusive; default all) into one.
func (t *Tensor) Flatten(startEnd ...int) *Tensor {
	if t.Dim() == 0 {
		return t.Reshape(1)
	}
	start, end := 0, t.Dim()-1
	if len(startEnd) > 0 {
		start = normDimOf("Flatten", startEnd[0], t.layout.Shape)
	}
	if len(startEnd) > 1 {
		end = normDimOf("Flatten", startEnd[1], t.layout.Shape)
	}
	if start > end {
		panicf("Flatten", "start dim %d comes after end dim %d", start, end)
	}
	s := t.layout.Shape
	ns := append(cloneInts(s[:start]), numel(s[start:end+1]))
	ns = append(ns, s[end+1:]...)
	return t.Reshape(ns...)
}

// Permute reorders the dimensions: dimension i of the result is dimension
// dims[i] of t.
func (t *Tensor) Permute(dims ...int) *Tensor {
	nd := t.Dim()
	if len(dims) != nd {
		panicf("Permute", "number of dims %d does not match tensor dims %d (shape %v)", len(dims), nd, t.layout.Shape)
	}
	seen := make([]bool, nd)
	l := Layout{Shape: make([]int, nd), Strides: make([]int, nd), Offset: t.layout.Offset}
	inv := make([]int, nd)
	for i, d := range dims {
		d = normDimOf("Permute", d, t.layout.Shape)
		if seen[d] {
			panicf("Permute", "repeated dim %d in %v", d, dims)
		}
		seen[d] = true
		l.Shape[i], l.Strides[i] = t.layout.Shape[d], t.layout.Strides[d]
		inv[d] = i
	}
	ts := t.sink()
	return t.view("Permute", l, func(g *Tensor) { ts.accumulate(g.Permute(inv...)) })
}

// Transpose swaps two dimensions.
func (t *Tensor) Transpose(d0, d1 int) *Tensor {
	nd := t.Dim()
	if nd == 0 {
		return t
	}
	a, b := normDimOf("Transpose", d0, t.layout.Shape), normDimOf("Transpose", d1, t.layout.Shape)
	perm := make([]int, nd)
	for i := range perm {
		perm[i] = i
	}
	perm[a], perm[b] = b, a
	return t.Permute(perm...)
}

// T reverses the dimensions (the transpose of a matrix).
func (t *Tensor) T() *Tensor {
	perm := make([]int, t.Dim())
	for i := range perm {
		perm[i] = t.Dim() - 1 - i
	}
	return t.Permute(perm...)
}

// Slice returns elements start..end-1 along dim, sharing storage. Negative
// bounds count from the end and bounds are clamped, as in Python slicing.
func (t *Tensor) Slice(dim, start, end int) *Tensor {
	d := normDimOf("Slice", dim, t.layout.Shape)
	n := t.layout.Shape[d]
	clamp := func(i int) int {
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	s, e := clamp(start), clamp(end)
	if e < s {
		e = s
	}
	return t.narrow("Slice", d, s, e-s)
}

// Narrow returns length elements along dim starting at start, sharing
// storage. Unlike Slice it panics when the range is out of bounds.
func (t *Tensor) Narrow(dim, start, length int) *Tensor {
	d := normDimOf("Narrow", dim, t.layout.Shape)
	n := t.layout.Shape[d]
	if start < 0 {
		start += n
	}
	if start < 0 || length < 0 || start+length > n {
		panicf("Narrow", "range [%d, %d) is out of bounds for dimension %d of size %d (shape %v)", start, start+length, dim, n, t.layout.Shape)
	}
	return t.narrow("Narrow", d, start, length)
}

func (t *Tensor) narrow(op string, d, start, length int) *Tensor {
	l := t.Layout()
	l.Offset += start * l.Strides[d]
	l.Shape[d] = length
	ts := t.sink()
	return t.view(op, l, func(g *Tensor) {
		full := ts.zeros()
		full.narrowView(d, start, length).CopyFrom(g)
		ts.accumulate(full)
	})
}

// narrowView is an unrecorded narrow used by backward passes.
func (t *Tensor) narrowView(d, start, length int) *Tensor {
	l := t.Layout()
	l.Offset += start * l.Strides[d]
	l.Shape[d] = length
	return newTensor(t.backend, t.storage, l)
}

// Select returns the slice at index i along dim, with dim removed.
func (t *Tensor) Select(dim, i int) *Tensor {
	d := normDimOf("Select", dim, t.layout.Shape)
	n := t.layout.Shape[d]
	if i < -n || i >= n {
		panicf("Select", "index %d is out of range for dimension %d with size %d (shape %v)", i, dim, n, t.layout.Shape)
	}
	if i < 0 {
		i += n
	}
	l := t.Layout()
	l.Offset += i * l.Strides[d]
	l.Shape = slices.Delete(l.Shape, d, d+1)
	l.Strides = slices.Delete(l.Strides, d, d+1)
	ts := t.sink()
	return t.view("Select", l, func(g *Tensor) {
		full := ts.zeros()
		full.narrowView(d, i, 1).CopyFrom(g.Unsqueeze(d))
		ts.accumulate(full)
	})
}

// Expand broadcasts t to shape without copying (-1 keeps a dimension). It
// panics if shape has a dimension below -1, if its number of elements
// overflows int, or if t does not broadcast to it.
func (t *Tensor) Expand(shape ...int) *Tensor {
	ns := cloneInts(shape)
	k := len(ns) - t.Dim()
	if k < 0 {
		panicf("Expand", "the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d)", len(ns), t.Dim())
	}
	for i := range ns {
		if ns[i] == -1 {
			if i < k {
				panicf("Expand", "-1 is not allowed in a leading, non-existing dimension (shape %v)", shape)
			}
			ns[i] = t.layout.Shape[i-k]
		}
	}
	checkedNumel("Expand", ns)
	l, ok := t.layout.broadcastTo(ns)
	if !ok {
		panicf("Expand", "the expanded size %v is not compatible with the tensor's shape %v", shape, t.layout.Shape)
	}
	if slices.Equal(ns, t.layout.Shape) {
		return t
	}
	ts := t.sink()
	return t.view("Expand", l, func(g *Tensor) { ts.accumulate(g) })
}

// broadcastTo is Expand for internal use, when shape is known to be valid.
func (t *Tensor) broadcastTo(shape []int) *Tensor {
	if slices.Equal(shape, t.layout.Shape) {
		return t
	}
	return t.Expand(shape...)
}

// Squeeze removes the given size-1 dimensions, or all of them if none are
// given (dimensions of other sizes are left, as in PyTorch).
func (t *Tensor) Squeeze(dims ...int) *Tensor {
	drop := make([]bool, t.Dim())
	if len(dims) == 0 {
		for i, d := range t.layout.Shape {
			drop[i] = d == 1
		}
	}
	for _, d := range dims {
		d = normDimOf("Squeeze", d, t.layout.Shape)
		drop[d] = t.layout.Shape[d] == 1
	}
	var ns []int
	for i, d := range t.layout.Shape {
		if !drop[i] {
			ns = append(ns, d)
		}
	}
	return t.Reshape(ns...)
}

// Unsqueeze inserts a size-1 dimension at dim (which may equal Dim(), or be
// negative counting from Dim()+1).
func (t *Tensor) Unsqueeze(dim int) *Tensor {
	if n := t.Dim() + 1; dim < -n || dim >= n {
		panicf("Unsqueeze", "dimension %d out of range (expected to be in range of [%d, %d]) for a tensor of shape %v", dim, -n, n-1, t.layout.Shape)
	}
	d := normDim("Unsqueeze", dim, t.Dim()+1)
	ns := slices.Insert(t.Shape(), d, 1)
	return t.View(ns...)
}
