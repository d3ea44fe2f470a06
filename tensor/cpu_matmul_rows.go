package tensor

import "github.com/wickml/wick/internal/blas"

var _ rowMatMuler = cpuBackend{}

// matMulRows implements rowMatMuler with blas.SgemmRowsT: a's rows must
// be unit-stride and b the transpose of a matrix with unit-stride rows
// (W.T()); other views are copied to that layout first.
func (b cpuBackend) matMulRows(dst, a Storage, al Layout, bs Storage, bl Layout) {
	m, k, n := al.Shape[0], al.Shape[1], bl.Shape[1]
	lda, ok := rowStride(al, m, k)
	if !ok {
		a = b.contiguousCopy(a, al)
		al, lda = contiguousLayout(al.Shape), k
	}
	// b [k, n] as the rows of its transpose [n, k]
	wl := Layout{Shape: []int{n, k}, Strides: []int{bl.Strides[1], bl.Strides[0]}, Offset: bl.Offset}
	ldb, ok := rowStride(wl, n, k)
	if !ok {
		bs = b.contiguousCopy(bs, wl)
		wl, ldb = contiguousLayout(wl.Shape), k
	}
	blas.SgemmRowsT(m, n, k, fs(a)[al.Offset:], lda, fs(bs)[wl.Offset:], ldb, fs(dst), n, 0)
}

// rowStride returns the row stride of the r×w matrix view l when its rows
// are unit-stride and do not overlap.
func rowStride(l Layout, r, w int) (int, bool) {
	if w > 1 && l.Strides[1] != 1 {
		return 0, false
	}
	if r == 1 {
		return w, true
	}
	return l.Strides[0], l.Strides[0] >= w
}
