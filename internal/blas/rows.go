package blas

//go:generate go run gen_rows512.go

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
// Sgemm's product of that row alone. Up to six (AVX-512) or three (AVX2)
// rows of A meet each quadruple of B's rows in one kernel call (on
// AVX-512 one call runs over a block's quadruples), and B is read in
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
	parallel.For(quads, g, func(lo, hi int) {
		var out [24]float32
		// blocks of gemvQuads quadruples of B's rows (64 rows of a
		// 768-wide B are 192 KiB, within L2), each met by A's rows a few
		// at a time: a quadruple of B's rows and those rows of A stay in
		// L1 while all of them meet, as in gemvT
		for q0 := lo; q0 < hi; q0 += gemvQuads {
			q1 := min(q0+gemvQuads, hi)
			full := max(q0, min(q1, n/4)) // the quadruples with four rows of B
			for i0 := 0; i0 < m; i0 += kern.many {
				rs := min(kern.many, m-i0)
				j := 4 * q0
				if kern.to != nil && full > q0 {
					kern.to(a[i0*lda:], lda, k, rs, b[j*ldb:], ldb, c[i0*ldc+j:], ldc, full-q0)
					j = 4 * full
				}
				for ; j < min(4*q1, n); j += 4 {
					if n-j >= 4 {
						kern.run(a[i0*lda:], lda, k, rs, b[j*ldb:], ldb, out[:4*rs])
						for r := range rs {
							crow := c[(i0+r)*ldc+j : (i0+r)*ldc+j+4]
							crow[0], crow[1], crow[2], crow[3] = out[4*r], out[4*r+1], out[4*r+2], out[4*r+3]
						}
						continue
					}
					for i := i0; i < i0+rs; i++ { // the last rows of B, fewer than four
						for r := range n - j {
							c[i*ldc+j+r] = dotGo(a[i*lda:i*lda+k], b[(j+r)*ldb:])
						}
					}
				}
			}
		}
	})
}

// rowsKernel is SgemmRowsT's family of dot-product kernels for one depth
// on one machine: run computes the dot products of rows ≤ many rows of x
// (ldx apart, k floats each) with four rows of w (ldw apart), row i's four
// in out[4i:4i+4], and gives a row the same bits whatever rows is. The
// family depends on the machine and k only, never on the number of rows.
type rowsKernel struct {
	many int
	run  func(x []float32, ldx, k, rows int, w []float32, ldw int, out []float32)
	// to, when not nil, is run for quads quadruples of w's rows one
	// after another (the q-th at w[4q·ldw:]), writing row i's four
	// products with the q-th to out[i·ldo+4q : i·ldo+4q+4] (C's rows)
	// instead of packed.
	to func(x []float32, ldx, k, rows int, w []float32, ldw int, out []float32, ldo, quads int)
}

// rowsKernelFor returns the family for depth k: sixteen-lane sums on
// AVX-512 (k ≥ 16), dot4's eight-lane sums on AVX2 (k ≥ 8, the bits of
// Sgemm's few-row path), dot4's Go loop otherwise.
func rowsKernelFor(k int) rowsKernel {
	switch {
	case active != nil && active.level >= cpu.AVX512 && k >= 16:
		return rowsKernel{many: 6, run: dot4z, to: dot4zTo}
	case active != nil && active.level >= cpu.AVX2 && k >= 8:
		return rowsKernel{many: 3, run: dot4r}
	}
	return rowsKernel{many: gemvMaxRows, run: dot4r}
}

// dot4zKernels are the AVX-512 kernels by their number of rows.
var dot4zKernels = [...]func(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo, quads int){
	1: dot4x1AVX512, 2: dot4x2AVX512, 3: dot4x3AVX512, 4: dot4x4AVX512, 5: dot4x5AVX512, 6: dot4x6AVX512,
}

// dot4z is rowsKernel.run with the AVX-512 kernels (1 ≤ rows ≤ 6, k ≥ 16).
func dot4z(x []float32, ldx, k, rows int, w []float32, ldw int, out []float32) {
	dot4zTo(x, ldx, k, rows, w, ldw, out[:4*rows], 4, 1)
}

// dot4zTo is rowsKernel.to with the AVX-512 kernels: dot4z for quads
// quadruples of w's rows, row i's four products with the q-th in
// out[i·ldo+4q : i·ldo+4q+4] (ldo ≥ 4·quads): straight into C's rows.
func dot4zTo(x []float32, ldx, k, rows int, w []float32, ldw int, out []float32, ldo, quads int) {
	_, _, _ = x[(rows-1)*ldx+k-1], w[(4*quads-1)*ldw+k-1], out[(rows-1)*ldo+4*quads-1]
	dot4zKernels[rows](k/16, &x[0], ldx, &w[0], ldw, &out[0], ldo, quads)
	if k%16 != 0 {
		for i := range rows {
			for q := range quads {
				dotTail((*[4]float32)(out[i*ldo+4*q:i*ldo+4*q+4]), x[i*ldx:i*ldx+k], w[4*q*ldw:], ldw, k/16*16)
			}
		}
	}
}

// dot4r is rowsKernel.run with dot4, and dot4x3 for three rows on AVX2.
func dot4r(x []float32, ldx, k, rows int, w []float32, ldw int, out []float32) {
	if rows == 3 && active != nil && active.level >= cpu.AVX2 && k >= 8 {
		dot4x3(x, ldx, k, w, ldw, out)
		return
	}
	for i := range rows {
		dot4(x[i*ldx:i*ldx+k], w, ldw, (*[4]float32)(out[4*i:4*i+4]))
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
