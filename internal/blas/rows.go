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
// Where an assembly path is active the products are dot products of a
// row of A with four rows of B at a time, in lanes of fused multiply-adds
// then across the lanes: sixteen lanes on AVX-512 (for k ≥ 16), and on
// AVX2 the eight of Sgemm's few-row path, so that there a row of C equals
// Sgemm's product of that row alone. Six (AVX-512) or three (AVX2) rows
// of A meet each quadruple of B's rows in one kernel, and B is read in
// blocks of 64 rows, each kept in cache while every row of A meets it, so
// B is read from memory once per call however many rows A has. Otherwise
// the products are the pure-Go fallback's (gemmRef's sums run along the
// depth in order, for any m). threads bounds the goroutines as in Sgemm;
// the split never changes a bit.
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
	kern := rowsKernelFor(k)
	rowsPer := gemvMaxRows // A's rows that meet a quadruple of B's in L1
	if kern.multi != nil {
		rowsPer = kern.many
	}
	parallel.For(quads, g, func(lo, hi int) {
		var out [4]float32
		var outs [24]float32
		// blocks of gemvQuads quadruples of B's rows (64 rows of a
		// 768-wide B are 192 KiB, within L2), each met by A's rows a few
		// at a time: a quadruple of B's rows and those rows of A stay in
		// L1 while all of them meet, as in gemvT
		for q0 := lo; q0 < hi; q0 += gemvQuads {
			q1 := min(q0+gemvQuads, hi)
			for i0 := 0; i0 < m; i0 += rowsPer {
				i1 := min(i0+rowsPer, m)
				for j := 4 * q0; j < min(4*q1, n); j += 4 {
					rows := min(4, n-j)
					i := i0
					if rows == 4 && kern.multi != nil {
						for ; i+kern.many <= i1; i += kern.many {
							kern.multi(a[i*lda:], lda, k, b[j*ldb:], ldb, outs[:4*kern.many])
							for r := range kern.many {
								crow := c[(i+r)*ldc+j : (i+r)*ldc+j+4]
								crow[0], crow[1], crow[2], crow[3] = outs[4*r], outs[4*r+1], outs[4*r+2], outs[4*r+3]
							}
						}
					}
					for ; i < i1; i++ {
						x := a[i*lda : i*lda+k]
						if rows == 4 {
							kern.one(x, b[j*ldb:], ldb, &out)
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

// rowsKernel is SgemmRowsT's family of dot-product kernels for one depth
// on one machine: multi computes the dot products of many rows of x (ldx
// apart, k floats each) with four rows of w (row i's four in
// out[4i:4i+4]), one those of a single row, and both give a row the same
// bits. The family depends on the machine and k only, never on the
// number of rows.
type rowsKernel struct {
	many  int
	multi func(x []float32, ldx, k int, w []float32, ldw int, out []float32)
	one   func(x, w []float32, ldw int, out *[4]float32)
}

// rowsKernelFor returns the family for depth k: sixteen-lane sums on
// AVX-512 (k ≥ 16), dot4's eight-lane sums on AVX2 (k ≥ 8, the bits of
// Sgemm's few-row path), dot4's Go loop otherwise.
func rowsKernelFor(k int) rowsKernel {
	switch {
	case active != nil && active.level >= cpu.AVX512 && k >= 16:
		return rowsKernel{many: 6, multi: dot4x6, one: dot4z}
	case active != nil && active.level >= cpu.AVX2 && k >= 8:
		return rowsKernel{many: 3, multi: dot4x3, one: dot4}
	}
	return rowsKernel{many: 1, one: dot4}
}

// dot4z writes to out the dot products of x with the four rows of w that
// start ldw apart, in sixteen lanes (dot4x1AVX512) and then dotTail.
func dot4z(x, w []float32, ldw int, out *[4]float32) {
	k := len(x)
	_ = w[3*ldw+k-1]
	dot4x1AVX512(k/16, &x[0], &w[0], ldw, out)
	dotTail(out, x, w, ldw, k/16*16)
}

// dot4x6 is dot4z for the six rows of x that start ldx apart, the rows of
// w read once for the six (dot4x6AVX512), each row with dot4z's bits.
func dot4x6(x []float32, ldx, k int, w []float32, ldw int, out []float32) {
	_, _ = x[5*ldx+k-1], w[3*ldw+k-1]
	dot4x6AVX512(k/16, &x[0], ldx, &w[0], ldw, (*[24]float32)(out))
	for i := range 6 {
		dotTail((*[4]float32)(out[4*i:4*i+4]), x[i*ldx:i*ldx+k], w, ldw, k/16*16)
	}
}

// dot4x3 is dot4 for the three rows of x that start ldx apart (k ≥ 8
// floats each, on AVX2), the rows of w read once for the three
// (dot4x3AVX2), each row with dot4's bits.
func dot4x3(x []float32, ldx, k int, w []float32, ldw int, out []float32) {
	_, _ = x[2*ldx+k-1], w[3*ldw+k-1]
	dot4x3AVX2(k/8, &x[0], ldx, &w[0], ldw, (*[12]float32)(out))
	for i := range 3 {
		dotTail((*[4]float32)(out[4*i:4*i+4]), x[i*ldx:i*ldx+k], w, ldw, k/8*8)
	}
}
