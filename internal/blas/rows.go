package blas

import (
	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/parallel"
)

// SgemmRowsT computes C = A·Bᵀ for A m×k (rows lda apart) and B n×k
// (rows ldb apart, a Linear layer's weight [out, in]) so that every row of
// C is computed from the same row of A alone, by sums whose order depends
// on n and k only: row i of C has the same bits whatever m is and
// whatever A's other rows hold. That is the batch invariance a server
// needs, where a request's rows share products with other requests' rows
// and must get the numbers they would get alone. Sgemm does not promise
// it: it computes up to four rows as dot products (gemv.go) and more rows
// with the blocked micro-kernels, whose sums are ordered otherwise, and
// the blocked path's depth blocks may depend on m.
//
// Where an assembly path is active the products are the dot products of
// Sgemm's few-row path, so a row of C equals Sgemm's product of that row
// alone (m = 1). B is read in blocks of 64 rows, each kept in cache while
// every row of A meets it, so B is read from memory once per call however
// many rows A has; the dot products run at the speed of Sgemm's few-row
// path, below its blocked kernels' for many rows. Otherwise they are the pure-Go fallback's (gemmRef's
// sums run along the depth in order, for any m). threads bounds the
// goroutines as in Sgemm; the split never changes a bit.
//
// SgemmRowsT panics as Sgemm does for bad sizes or slices.
func SgemmRowsT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, threads int) {
	if m < 0 || n < 0 || k < 0 {
		panic("blas: SgemmRowsT: negative size")
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || active == nil {
		Sgemm(false, true, m, n, k, a, lda, b, ldb, c, ldc, false, threads)
		return
	}
	checkMatrix("C", false, m, n, c, ldc)
	checkMatrix("A", false, m, k, a, lda)
	checkMatrix("B", true, k, n, b, ldb)
	if threads <= 0 {
		threads = parallel.Workers()
	}
	if 2*float64(m)*float64(n)*float64(k) < minParallelFlops {
		threads = 1
	}
	quads := ceilDiv(n, 4)
	g := quads
	if threads > 1 {
		g = max(gemvQuads, grain(quads, threads))
	}
	rowsPer := gemvMaxRows // A's rows that meet a quadruple of B's in L1
	if active.level >= cpu.AVX2 && k >= 8 {
		rowsPer = 3 // dot4x3's
	}
	parallel.For(quads, g, func(lo, hi int) {
		var out [4]float32
		// blocks of gemvQuads quadruples of B's rows (64 rows of a
		// 768-wide B are 192 KiB, within L2), each met by A's rows a few
		// at a time: a quadruple of B's rows and those rows of A stay in
		// L1 while all of them meet, as in gemvT
		var out3 [3][4]float32
		for q0 := lo; q0 < hi; q0 += gemvQuads {
			q1 := min(q0+gemvQuads, hi)
			for i0 := 0; i0 < m; i0 += rowsPer {
				i1 := min(i0+rowsPer, m)
				for j := 4 * q0; j < min(4*q1, n); j += 4 {
					rows := min(4, n-j)
					i := i0
					for ; rows == 4 && i+3 <= i1 && dot4x3(a[i*lda:], lda, k, b[j*ldb:], ldb, &out3); i += 3 {
						for r := range 3 {
							copy(c[(i+r)*ldc+j:(i+r)*ldc+j+4], out3[r][:])
						}
					}
					for ; i < i1; i++ {
						x := a[i*lda : i*lda+k]
						if rows == 4 {
							dot4(x, b[j*ldb:], ldb, &out)
						} else {
							for r := range rows {
								out[r] = dotGo(x, b[(j+r)*ldb:])
							}
						}
						copy(c[i*ldc+j:i*ldc+j+rows], out[:rows])
					}
				}
			}
		}
	})
}

// dot4x3 is dot4 for the three rows of x that start ldx apart (of k
// floats): row i's dot products with the four rows of w in out[i], each
// with dot4's bits, the rows of w read once for the three. It reports
// false, doing nothing, where dot4's assembly kernel would not run (then
// the caller runs dot4 per row).
func dot4x3(x []float32, ldx, k int, w []float32, ldw int, out *[3][4]float32) bool {
	k8 := k / 8
	if active == nil || active.level < cpu.AVX2 || k8 == 0 {
		return false
	}
	_, _ = x[2*ldx+k-1], w[3*ldw+k-1]
	var flat [12]float32
	dot4x3AVX2(k8, &x[0], ldx, &w[0], ldw, &flat)
	for i := range 3 {
		o := (*[4]float32)(flat[4*i : 4*i+4])
		dotTail(o, x[i*ldx:i*ldx+k], w, ldw, k8*8)
		out[i] = *o
	}
	return true
}
