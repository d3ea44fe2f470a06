package blas

import (
	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/parallel"
)

// Products of a few rows by a transposed B: x·Wᵀ for a Linear layer's
// weight W [out, in] when the input is one token's row (text generation
// with a key/value cache). Packing B costs a read and a write of the whole
// weight for one use of it, and the 6×16 micro-kernel would waste five of
// its six rows, so these products are dot products instead: W's rows are
// read in place, four at a time, each once per call, against the few rows
// of A held in cache. The sums are done in another order than the
// micro-kernel's (eight lanes, then across them), so results differ from
// Sgemm's packed path by rounding.

// gemvMaxRows is the largest m that Sgemm computes as dot products when
// op(B) is a transposed matrix (and A is not).
const gemvMaxRows = 4

// viaGemv reports whether Sgemm computes an m-row product of these
// layouts as dot products (gemvT) rather than with the blocked driver.
func viaGemv(transA, transB bool, m int) bool {
	return active != nil && transB && !transA && m <= gemvMaxRows
}

// gemvQuads is the least number of W's row quadruples per task: 64 rows
// of a 768-wide weight are 192 KiB.
const gemvQuads = 16

// gemvT computes C (=|+=) A·Bᵀ for A m×k (rows lda apart) and B n×k (rows
// ldb apart), splitting B's rows over at most threads goroutines.
func gemvT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool, threads int) {
	quads := ceilDiv(n, 4)
	g := quads // one task: the calling goroutine
	if threads > 1 {
		g = max(gemvQuads, grain(quads, threads))
	}
	parallel.For(quads, g, func(lo, hi int) {
		var out [4]float32
		for j := 4 * lo; j < min(4*hi, n); j += 4 {
			rows := min(4, n-j)
			for i := range m {
				x := a[i*lda : i*lda+k]
				if rows == 4 {
					dot4(x, b[j*ldb:], ldb, &out)
				} else {
					for r := range rows {
						out[r] = dotGo(x, b[(j+r)*ldb:])
					}
				}
				crow := c[i*ldc+j : i*ldc+j+rows]
				for r, v := range out[:rows] {
					if accumulate {
						crow[r] += v
					} else {
						crow[r] = v
					}
				}
			}
		}
	})
}

// dot4 writes to out the dot products of x with the four rows of w that
// start ldw apart.
func dot4(x, w []float32, ldw int, out *[4]float32) {
	k := len(x)
	_ = w[3*ldw+k-1]
	k8 := k / 8
	// the assembly dot kernel is there where an assembly path is active
	// (tests may make a Go path active, in a build without assembly too)
	if active != nil && active.level >= cpu.AVX2 && k8 > 0 {
		dot4AVX2(k8, &x[0], &w[0], ldw, out)
	} else {
		*out = [4]float32{}
		k8 = 0
	}
	dotTail(out, x, w, ldw, k8*8)
}

// dotTail adds to out the products of x[p0:] with the same columns of the
// four rows of w that start ldw apart: the tail of dot4 (and of dot4x3)
// after the assembly kernel's blocks of eight.
func dotTail(out *[4]float32, x, w []float32, ldw, p0 int) {
	for p := p0; p < len(x); p++ {
		for r := range 4 {
			out[r] += x[p] * w[r*ldw+p]
		}
	}
}

// dotGo returns the dot product of x and y (len(y) ≥ len(x)).
func dotGo(x, y []float32) float32 {
	var s float32
	for p, v := range x {
		s += v * y[p]
	}
	return s
}
