package blas

import (
	"sync"

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
// micro-kernel's (eight lanes on AVX2, sixteen on AVX-512, then across
// them), so results differ from Sgemm's packed path by rounding; on every
// assembly path a row's products have SgemmRowsT's bits.
//
// Such a product reads each element of W once from memory for 2·m flops,
// so it runs at the rate W streams in: on AVX-512 one row of A meets W in
// gemv2AVX512, a loop over many of W's rows in one call that reads two
// halves of a block of rows side by side, each in address order: two
// streams a block's half apart for the hardware prefetchers, which read
// faster than gemv1AVX512's one (the four rows of a quadruple read side by
// side, four streams a row apart, with or without a software prefetch of
// the next quadruple, streamed at 0.53-0.57× the rate on one thread and
// 0.75× on two on Zen 5, BenchmarkGemvStream). Zen 5 timings are in
// docs/journal/2026-12-02-gemv.md and at gemvStreams2.

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

// gemvMinParallel is the least number of W's elements (n·k) for which
// gemvT splits W's rows over threads: a product of a few rows reads every
// element of W once from memory, so it is bound by bandwidth, not by its
// flops, and a second thread reads at nearly twice the rate of one (a
// 192×576 key projection, 432 KiB, takes about 15 µs on one thread; a
// polling worker joins a loop in well under one).
const gemvMinParallel = 1 << 15

// gemvBufs recycles gemvBF16's float32 copies of A's rows.
var gemvBufs sync.Pool

// gemvT computes C (=|+=) A·Bᵀ for A m×k (rows lda apart) and B n×k (rows
// ldb apart), splitting B's rows over at most threads goroutines.
func gemvT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool, threads int) {
	quads := ceilDiv(n, 4)
	if threads <= 1 {
		// on the caller, without a closure to allocate
		gemvTask(m, n, k, 0, quads, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
	parallel.For(quads, max(gemvQuads, grain(quads, threads)), func(lo, hi int) {
		gemvTask(m, n, k, lo, hi, a, lda, b, ldb, c, ldc, accumulate)
	})
}

// gemvTask is gemvT's task for the quadruples [lo, hi) of B's rows.
func gemvTask(m, n, k, lo, hi int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	if active != nil && active.level >= cpu.AVX512 && k >= 16 {
		j0, j1 := 4*lo, min(4*hi, n)
		if m == 1 {
			gemvWide1(n, k, j0, j1, a, b, ldb, c, accumulate)
		} else {
			gemvWide(m, k, j0, j1, a, lda, b, ldb, c, ldc, accumulate)
		}
		gemvLast(m, k, j0, j1, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
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
			store(c[i*ldc+j:i*ldc+j+rows], out[:rows], accumulate)
		}
	}
}

// gemvWide1 is gemvT's task for C's columns [j0, j1) of one row on AVX-512
// (k ≥ 16), but for the last rows of B, fewer than four (gemvLast): every
// column with SgemmRowsT's bits (dot4x1AVX512's sixteen-lane sums), from
// gemv2AVX512 (or gemv1AVX512), which runs over a block of up to 256 of
// B's rows per call in address order. (Its own function, so that out stays on the stack: dot4z's slice
// of gemvWide's escapes.)
func gemvWide1(n, k, j0, j1 int, a, b []float32, ldb int, c []float32, accumulate bool) {
	var out [256]float32
	full := j0 + (j1-j0)/4*4
	x := a[:k]
	k16 := k / 16
	for j := j0; j < full; j += len(out) {
		rows := min(len(out), full-j)
		_ = b[(j+rows-1)*ldb+k-1]
		if gemvStreams2 {
			// rows is a multiple of four: the first half and the
			// second, side by side
			gemv2AVX512(rows/2, k16, &x[0], &b[j*ldb], ldb, rows/2, &out[0])
		} else {
			gemv1AVX512(rows, k16, &x[0], &b[j*ldb], ldb, &out[0])
		}
		if k16*16 < k {
			for q := 0; q < rows; q += 4 {
				dotTail((*[4]float32)(out[q:q+4]), x, b[(j+q)*ldb:], ldb, k16*16)
			}
		}
		store(c[j:j+rows], out[:rows], accumulate)
	}
}

// gemvWide is gemvWide1 for 2 ≤ m ≤ gemvMaxRows rows of A, with dot4z,
// which reads a quadruple of B's rows once for all of them.
func gemvWide(m, k, j0, j1 int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	var out [24]float32 // dot4z writes up to 24
	full := j0 + (j1-j0)/4*4
	for j := j0; j < full; j += 4 {
		dot4z(a, lda, k, m, b[j*ldb:], ldb, out[:4*m])
		for i := range m {
			store(c[i*ldc+j:i*ldc+j+4], out[4*i:4*i+4], accumulate)
		}
	}
}

// gemvLast is the rest of gemvWide's and gemvWide1's columns: those of the
// last rows of B in [j0, j1), fewer than four, in Go.
func gemvLast(m, k, j0, j1 int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	full := j0 + (j1-j0)/4*4
	for i := range m {
		x := a[i*lda : i*lda+k]
		for j := full; j < j1; j++ {
			v := dotGo(x, b[j*ldb:])
			if accumulate {
				c[i*ldc+j] += v
			} else {
				c[i*ldc+j] = v
			}
		}
	}
}

// store writes v to dst, or adds it to dst when accumulate is set.
func store(dst, v []float32, accumulate bool) {
	if !accumulate {
		copy(dst, v)
		return
	}
	for r, x := range v[:len(dst)] {
		dst[r] += x
	}
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

// gemvStreams2 says whether gemvWide1 reads its block of rows as two
// streams side by side (gemv2AVX512, the first half of the rows and the
// second) rather than as one (gemv1AVX512); benchmarks switch it off. On
// Zen 5 two streams read W 1.01-1.17× faster on one thread and 1.04-1.20×
// on two, four no faster than two (BenchmarkGemvStream, 2026-12-04).
var gemvStreams2 = true

// gemvPrefetchBF16 is how far ahead, in bytes, gemvBF16AVX512 prefetches
// the line it reads, 0 for no software prefetch (benchmarks change it):
// W's rows stream in address order, which the hardware prefetchers
// follow. On one Zen 5 machine 16 KiB ahead once read 1.2–1.5× faster
// than 1 KiB; on another (2026-12-02, 23:00 UTC) none read 1.0-1.3× faster
// than 16 KiB at one thread and 1.45× at two (BenchmarkGemvStreamGPT2),
// as the float32 kernel, which has no prefetch, does.
var gemvPrefetchBF16 = 0

// gemvWideBF16 writes to c[j0:j1] the dot products of x (k ≥ 32 floats;
// xe and xo its even and odd elements, at least k/32·16 of each) with the
// bfloat16 rows j0..j1-1 of w (ldw apart): gemvBF16AVX512 on the first
// multiple of 32 depths, then Go.
func gemvWideBF16(x, xe, xo []float32, w []uint16, ldw, j0, j1 int, c []float32) {
	if j0 >= j1 {
		return
	}
	k := len(x)
	k32 := k / 32
	p0 := 32 * k32
	_, _ = xe[16*k32-1], xo[16*k32-1]
	_ = w[(j1-1)*ldw+k-1]
	c = c[j0:j1]
	gemvBF16AVX512(j1-j0, k32, &xe[0], &xo[0], &w[j0*ldw], ldw, gemvPrefetchBF16, &c[0])
	if p0 < k {
		for r := range c {
			c[r] += dotBF16Go(x[p0:], w[(j0+r)*ldw+p0:])
		}
	}
}
