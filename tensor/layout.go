package tensor

import "strconv"

// Layout says how a tensor's elements sit in its storage: element
// (i0, i1, ...) is at Offset + i0*Strides[0] + i1*Strides[1] + ...
// Strides are in elements and may be zero (a broadcast dimension).
type Layout struct {
	Shape   []int
	Strides []int
	Offset  int
}

// ContiguousStrides returns the row-major strides of shape.
func ContiguousStrides(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		if shape[i] > 1 {
			s *= shape[i]
		}
	}
	return st
}

// contiguousLayout returns the row-major layout of shape at offset 0.
func contiguousLayout(shape []int) Layout {
	return Layout{Shape: cloneInts(shape), Strides: ContiguousStrides(shape)}
}

// numel returns the number of elements of shape.
func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Numel returns the number of elements of the layout.
func (l Layout) Numel() int { return numel(l.Shape) }

// IsContiguous reports whether the layout is row-major without gaps
// (size-1 dimensions may have any stride).
func (l Layout) IsContiguous() bool {
	s := 1
	for i := len(l.Shape) - 1; i >= 0; i-- {
		if l.Shape[i] == 1 {
			continue
		}
		if l.Strides[i] != s {
			return false
		}
		s *= l.Shape[i]
	}
	return true
}

// Span returns the lowest and highest storage offsets of the layout's
// elements; ok is false for a layout without elements.
func (l Layout) Span() (lo, hi int, ok bool) {
	if numel(l.Shape) == 0 {
		return 0, 0, false
	}
	lo, hi = l.Offset, l.Offset
	for i, n := range l.Shape {
		if n > 1 {
			if st := l.Strides[i]; st < 0 {
				lo += (n - 1) * st
			} else {
				hi += (n - 1) * st
			}
		}
	}
	return lo, hi, true
}

// Offsets returns the storage offset of each of the layout's elements, in
// row-major order of its shape.
func (l Layout) Offsets() []int {
	n := numel(l.Shape)
	out := make([]int, 0, n)
	idx := make([]int, len(l.Shape))
	for range n {
		o := l.Offset
		for d, i := range idx {
			o += i * l.Strides[d]
		}
		out = append(out, o)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < l.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// Overlaps reports whether the spans of two layouts of one storage share
// an offset, so that writing through one may change what the other reads.
// It is conservative: interleaved views (even and odd elements) that share
// no element overlap by this test.
func (l Layout) Overlaps(m Layout) bool {
	alo, ahi, aok := l.Span()
	blo, bhi, bok := m.Span()
	return aok && bok && alo <= bhi && blo <= ahi
}

func cloneInts(s []int) []int {
	if s == nil {
		return []int{}
	}
	return append([]int(nil), s...)
}

// BroadcastShapes returns the shape that a and b broadcast to under NumPy's
// rules (align trailing dimensions; each pair must be equal or contain a 1),
// and false if they are incompatible.
func BroadcastShapes(a, b []int) ([]int, bool) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := range n {
		da, db := 1, 1
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db:
			out[i] = da
		case da == 1:
			out[i] = db
		case db == 1:
			out[i] = da
		default:
			return nil, false
		}
	}
	return out, true
}

// broadcastTo returns l viewed with shape (which l must broadcast to):
// leading dimensions are added and size-1 dimensions get stride 0.
func (l Layout) broadcastTo(shape []int) (Layout, bool) {
	if len(shape) < len(l.Shape) {
		return Layout{}, false
	}
	out := Layout{Shape: cloneInts(shape), Strides: make([]int, len(shape)), Offset: l.Offset}
	k := len(shape) - len(l.Shape)
	for i := range l.Shape {
		switch {
		case l.Shape[i] == shape[k+i]:
			out.Strides[k+i] = l.Strides[i]
		case l.Shape[i] == 1:
			out.Strides[k+i] = 0
		default:
			return Layout{}, false
		}
	}
	return out, true
}

// normDim turns a possibly negative dimension into an index in [0, ndim).
func normDim(op string, dim, ndim int) int {
	d := dim
	if d < 0 {
		d += ndim
	}
	if d < 0 || d >= ndim {
		lo, hi := -ndim, ndim-1
		if ndim == 0 {
			lo, hi = -1, 0
		}
		panicf(op, "dimension %d out of range (expected to be in range of [%d, %d] for a %d-d tensor)", dim, lo, hi, ndim)
	}
	return d
}

// normDimOf is normDim for a dimension of a tensor of the given shape; its
// panic message names the shape.
func normDimOf(op string, dim int, shape []int) int {
	nd := len(shape)
	if dim < -nd || dim >= nd {
		if nd == 0 {
			panicf(op, "dimension %d out of range: the tensor is 0-d (shape [])", dim)
		}
		panicf(op, "dimension %d out of range (expected to be in range of [%d, %d]) for a tensor of shape %v", dim, -nd, nd-1, shape)
	}
	return normDim(op, dim, nd)
}

// Collapse merges adjacent dimensions that are contiguous with each other in
// every one of the given stride sets, and drops size-1 dimensions. It
// returns the reduced shape and strides (at least one dimension). Backends
// use it to turn a strided iteration into as few, as long runs as possible.
func Collapse(shape []int, strides ...[]int) ([]int, [][]int) {
	outShape := []int{}
	outStrides := make([][]int, len(strides))
	for i, d := range shape {
		if d == 1 {
			continue
		}
		if k := len(outShape) - 1; k >= 0 {
			mergeable := true
			for j, st := range strides {
				if outStrides[j][k] != st[i]*d {
					mergeable = false
					break
				}
			}
			if mergeable {
				outShape[k] *= d
				for j, st := range strides {
					outStrides[j][k] = st[i]
				}
				continue
			}
		}
		outShape = append(outShape, d)
		for j, st := range strides {
			outStrides[j] = append(outStrides[j], st[i])
		}
	}
	if len(outShape) == 0 {
		outShape = []int{1}
		for j := range strides {
			outStrides[j] = []int{1}
		}
	}
	return outShape, outStrides
}

// shapeString formats s as fmt.Sprint does ("[2 3]"), without fmt's
// reflection: record calls it for every recorded op.
func shapeString(s []int) string {
	b := make([]byte, 0, 2+8*len(s))
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return string(append(b, ']'))
}

// MatrixOperand says how the matrices of a [..., rows, cols] layout are laid
// out for BLAS: row-major with leading dimension ld (trans false) or
// column-major (trans true). ok is false when neither of the last two
// dimensions has unit stride, and the operand must be copied first.
func (l Layout) MatrixOperand() (trans bool, ld int, ok bool) {
	nd := len(l.Shape)
	rs, cs := l.Strides[nd-2], l.Strides[nd-1]
	rows, cols := l.Shape[nd-2], l.Shape[nd-1]
	switch {
	case cs == 1 || cols == 1:
		return false, max(rs, cols, 1), rs >= cols || rows == 1
	case rs == 1 || rows == 1:
		return true, max(cs, rows, 1), cs >= rows || cols == 1
	}
	return false, 0, false
}
