// Package blas holds Wick's single-precision matrix multiply for the CPU.
//
// Sgemm is a GotoBLAS/BLIS-style blocked product: op(B) is packed into
// kc×nr panels and op(A) into kc×mr panels (the packing absorbs the
// transposes, so no whole matrix is ever copied; small products read the
// operands in place instead), and a register-blocked mr×nr micro-kernel
// written in assembly multiplies them: 12×32 for AVX-512 (with a 4×32
// kernel for row blocks of at most 8 rows), 6×16 for AVX2+FMA (with a 2×16
// kernel for row blocks of at most 4 rows, and variants that pack a panel
// of B, or a transposed A read in place, as their first tiles read them).
// The path is chosen at run time by internal/cpu from the CPU's features
// and the environment variable WICK_CPU, and its cache blocking from the
// CPU's cache sizes; where no kernel can run (another
// architecture, or an amd64 CPU or OS without AVX2, FMA or YMM state) the
// portable pure-Go gemmRef is used, which is also the reference the tests
// compare every kernel against.
//
// Products of at most four rows by a transposed B (a Linear layer applied
// to one token) are dot products of A's rows with B's rows read in place,
// by kernels of their own that stream B from memory (AVX-512 or AVX2+FMA,
// see gemv.go).
//
// Work is split on the shared worker pool of internal/parallel, never a
// goroutine per tile: with at least 64 rows per thread each thread computes
// its own range of C's rows, packing op(B) for itself and never waiting for
// the others; smaller products share out the macro-tiles of C of each depth
// block. The depth blocks depend on the product's shape only, so the
// number of threads never changes a bit of the result. docs/perf.md
// records the design's measurements against OpenBLAS (scripts/
// bench_sgemm_paired.sh times the two call against call in one process).
package blas

import (
	"fmt"

	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/parallel"
)

// Kernel names the micro-kernel Sgemm uses on this machine: "avx512",
// "avx2+fma" or "generic" (the pure-Go fallback).
func Kernel() string {
	if active != nil {
		return active.name
	}
	return "generic"
}

// active is the path Sgemm runs, nil for the pure-Go fallback; tests change
// it.
var active *path

// pathFor returns the best assembly path of this build that runs at level
// l, nil if none does.
func pathFor(l cpu.Level) *path {
	for _, p := range asmPaths {
		if p.level <= l {
			return p
		}
	}
	return nil
}

// minParallelFlops is the size of product (2·m·n·k) below which Sgemm runs
// on the calling goroutine only: waking a worker costs a few microseconds.
const minParallelFlops = 1 << 21

// Sgemm computes C = op(A)·op(B) (or C += op(A)·op(B) when accumulate is
// set) for row-major matrices: op(A) is m×k, op(B) is k×n, C is m×n with row
// stride ldc. When transA is set A is stored k×m (so op(A) = Aᵀ), likewise
// for B; lda and ldb are the row strides of A and B as stored. threads
// bounds the goroutines used (≤ 0 means all of the worker pool's).
//
// Sgemm panics if a size is negative, a leading dimension is smaller than
// the stored row width, or a slice is too short for the matrix it holds.
func Sgemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool, threads int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("blas: Sgemm: negative size m=%d n=%d k=%d", m, n, k))
	}
	if m == 0 || n == 0 {
		return
	}
	checkMatrix("C", false, m, n, c, ldc)
	if k == 0 {
		if !accumulate {
			for i := range m {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	checkMatrix("A", transA, m, k, a, lda)
	checkMatrix("B", transB, k, n, b, ldb)
	if threads <= 0 {
		threads = parallel.Workers()
	}
	if viaGemv(transA, transB, m) {
		if n*k < gemvMinParallel {
			threads = 1
		}
		gemvT(m, n, k, a, lda, b, ldb, c, ldc, accumulate, threads)
		return
	}
	if 2*float64(m)*float64(n)*float64(k) < minParallelFlops {
		threads = 1
	}
	if active != nil {
		gemmPacked(active, transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate, threads)
		return
	}
	sgemmGeneric(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate, threads)
}

// SgemmRange computes C = op(A)[:, k0:k1]·op(B)[k0:k1, :]: the terms at
// depths [k0, k1) of the depth-k product that Sgemm(transA, transB, m, n,
// k, a, lda, b, ldb, c, ldc, false, threads) computes, with the same
// operands, grouped and added in the order Sgemm adds them for depth k.
// Sgemm sums the depth in blocks, each from zero, and adds the blocks'
// sums in turn; SgemmRange cuts its range at those blocks' bounds, so a
// term it leaves out that is a product with a zero (and a finite factor)
// changes nothing: such products are ±0, a sum that starts at +0 never
// becomes -0, and adding ±0 to it is exact. Where every term outside
// [k0, k1) is such a product, C is therefore bit for bit Sgemm's, for work
// proportional to k1-k0 (the causal attention of internal callers skips
// the masked part of its products this way). Products that Sgemm computes
// as dot products (see gemv.go), whose sums do not follow the depth in
// order, are computed over the whole depth.
//
// SgemmRange panics if k0 < 0, k1 < k0 or k1 > k, and as Sgemm does for
// the depth-k product.
func SgemmRange(transA, transB bool, m, n, k, k0, k1 int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, threads int) {
	if k0 < 0 || k1 < k0 || k1 > k {
		panic(fmt.Sprintf("blas: SgemmRange: depths [%d, %d) are not within [0, %d)", k0, k1, k))
	}
	if m < 0 || n < 0 {
		panic(fmt.Sprintf("blas: SgemmRange: negative size m=%d n=%d", m, n))
	}
	if m == 0 || n == 0 {
		return
	}
	checkMatrix("C", false, m, n, c, ldc)
	checkMatrix("A", transA, m, k, a, lda)
	checkMatrix("B", transB, k, n, b, ldb)
	if viaGemv(transA, transB, m) {
		Sgemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, false, threads)
		return
	}
	if k1 == k0 {
		Sgemm(transA, transB, m, n, 0, a, lda, b, ldb, c, ldc, false, threads) // C = 0
		return
	}
	// the depth of Sgemm's blocks for this product: gemmPacked's; the
	// pure-Go fallback adds every term straight into C, so any cut leaves
	// its sums as they are
	kc := k
	if active != nil {
		kc = active.depthBlock(m, n, k)
	}
	for p0 := k0 / kc * kc; p0 < k1; p0 += kc {
		lo, hi := max(p0, k0), min(p0+kc, k1)
		ao, bo := lo, lo*ldb // op(A)'s column lo, op(B)'s row lo
		if transA {
			ao = lo * lda
		}
		if transB {
			bo = lo
		}
		Sgemm(transA, transB, m, n, hi-lo, a[ao:], lda, b[bo:], ldb, c, ldc, lo > k0, threads)
	}
}

// sgemmGeneric is the pure-Go fallback: gemmRef over row blocks of C.
func sgemmGeneric(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool, threads int) {
	if !accumulate {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
	}
	rows := max(4, (m+threads-1)/threads)
	parallel.For(m, rows, func(lo, hi int) {
		gemmRef(transA, transB, lo, hi, n, k, a, lda, b, ldb, c, ldc)
	})
}

// checkMatrix panics unless s holds an r×w matrix (w×r stored when trans)
// with row stride ld.
func checkMatrix(name string, trans bool, r, w int, s []float32, ld int) {
	if trans {
		r, w = w, r
	}
	if ld < max(w, 1) {
		panic(fmt.Sprintf("blas: Sgemm: leading dimension of %s is %d, less than its stored width %d", name, ld, w))
	}
	if need := (r-1)*ld + w; len(s) < need {
		panic(fmt.Sprintf("blas: Sgemm: %s (%d×%d stored, stride %d) needs %d elements, has %d", name, r, w, ld, need, len(s)))
	}
}
