//go:build amd64 && !purego

package blas

import "github.com/wickml/wick/internal/cpu"

// avx2Path is the 6×16 AVX2+FMA kernel (12 YMM accumulators) with its
// packing routines, a 2×16 edge kernel, and variants of the kernel that
// pack the B panel or the transposed A they read in place.
var avx2Path = &path{
	name: "avx2+fma", level: cpu.AVX2, mr: 6, nr: 16, nc: 4096,
	kern:     sgemmKernel6x16AVX2,
	kernCols: sgemmKernel6x16AVX2Cols,
	edgeRows: 2, edge: sgemmKernel2x16AVX2,
	kernPackB:     sgemmKernel6x16AVX2PackB,
	kernColsPackA: sgemmKernel6x16AVX2ColsPackA,
	packBRows:     packBRows16,
	packBCols:     func(dst, src []float32, ldb, kb int) { packBColsStrips(dst, src, ldb, kb, 16) },
	packACols:     packACols6,
}

// avx512Path is the 12×32 AVX-512 kernel (24 ZMM accumulators, 2 for the
// B row, 6 for broadcast A values) with its packing routines.
var avx512Path = &path{
	name: "avx512", level: cpu.AVX512, mr: 12, nr: 32, nc: 4096,
	kern:     sgemmKernel12x32AVX512,
	kernCols: sgemmKernel12x32AVX512Cols,
	edgeRows: 4, edge: sgemmKernel4x32AVX512,
	packBRows: packBRows32,
	packBCols: func(dst, src []float32, ldb, kb int) { packBColsStrips(dst, src, ldb, kb, 32) },
	packACols: packACols12,
}

// asmPaths lists the assembly paths of this build, best first; each runs
// only where cpu.Detected reaches its level.
var asmPaths = []*path{avx512Path, avx2Path}

func init() {
	// blocking from the caches of this machine (the defaults where CPUID
	// does not report them): a B panel in half of L1 for AVX2 (kc = 256
	// on a 32 KiB L1, as measured on Zen), in two thirds for AVX-512
	// (kc = 256 on Sapphire Rapids' 48 KiB, the best of 128-384 there);
	// docs/perf.md has the measurements
	avx2Path.kc, avx2Path.mc = blocking(avx2Path.mr, avx2Path.nr, cpu.L1D/2, cpu.L2, 256, 96)
	avx512Path.kc, avx512Path.mc = blocking(avx512Path.mr, avx512Path.nr, cpu.L1D*2/3, cpu.L2, 256, 504)
	// where C is larger than half of L2 (it is read and written once
	// per depth block), a B panel in the whole L1 (kc = 384 there: the
	// 1024² product on Sapphire Rapids 2-4% faster, docs/perf.md); not
	// measured faster on the AVX2 path, which keeps its kc
	avx512Path.kcWide, _ = blocking(avx512Path.mr, avx512Path.nr, cpu.L1D, cpu.L2, 384, 504)
	avx512Path.wideC = cpu.L2 / 2
	active = pathFor(cpu.Use)
}

// sgemmKernel6x16AVX2 is the 6×16 AVX2+FMA micro-kernel of kernel_amd64.s,
// with kernelFunc's contract.
//
//go:noescape
func sgemmKernel6x16AVX2(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int)

// sgemmKernel6x16AVX2Cols is sgemmKernel6x16AVX2 for an A read in place
// from a transposed A: it fetches A's lines 8 depth steps ahead.
//
//go:noescape
func sgemmKernel6x16AVX2Cols(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int)

// sgemmKernel6x16AVX2ColsPackA is sgemmKernel6x16AVX2Cols that also
// packs A, with packAKernelFunc's contract.
//
//go:noescape
func sgemmKernel6x16AVX2ColsPackA(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int, ap *float32)

// sgemmKernel6x16AVX2PackB is the 6×16 kernel for one tile that also
// packs its B panel, with packKernelFunc's contract.
//
//go:noescape
func sgemmKernel6x16AVX2PackB(k int, a *float32, rsA, csA int, b *float32, rsB int, bp *float32, c *float32, ldc int, acc int)

// sgemmKernel2x16AVX2 is the 2×16 AVX2+FMA edge kernel of
// kernel_amd64.s, with edgeFunc's contract.
//
//go:noescape
func sgemmKernel2x16AVX2(panels, k int, a *float32, rsA, csA int, b *float32, rsB, bNext int, c *float32, ldc int, acc int)

// sgemmKernel12x32AVX512Cols is sgemmKernel12x32AVX512 for an A read in
// place from a transposed A: it fetches A's lines 8 depth steps ahead.
//
//go:noescape
func sgemmKernel12x32AVX512Cols(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int)

// sgemmKernel12x32AVX512 is the 12×32 AVX-512 micro-kernel of
// kernel512_amd64.s, with kernelFunc's contract.
//
//go:noescape
func sgemmKernel12x32AVX512(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int)

// sgemmKernel4x32AVX512 is the 4×32 AVX-512 edge kernel of
// kernel512_amd64.s, with edgeFunc's contract.
//
//go:noescape
func sgemmKernel4x32AVX512(panels, k int, a *float32, rsA, csA int, b *float32, rsB, bNext int, c *float32, ldc int, acc int)

// Packing routines of pack_amd64.s (see pack.go for the layouts).

//go:noescape
func packBRows16AVX2(dst, src *float32, ldb, kb int)

//go:noescape
func packBRows32AVX512(dst, src *float32, ldb, kb int)

//go:noescape
func packBCols16AVX2(dst, src *float32, ldb, ldd, kb8 int)

//go:noescape
func packACols6AVX2(dst, src *float32, lda, kb, panels int)

//go:noescape
func packACols12AVX2(dst, src *float32, lda, kb, panels int)

// packBRows16 copies kb rows of 16 floats, ldb apart in src, into dst.
func packBRows16(dst, src []float32, ldb, kb int) {
	_, _ = dst[kb*16-1], src[(kb-1)*ldb+16-1]
	packBRows16AVX2(&dst[0], &src[0], ldb, kb)
}

// packBRows32 copies kb rows of 32 floats, ldb apart in src, into dst.
func packBRows32(dst, src []float32, ldb, kb int) {
	_, _ = dst[kb*32-1], src[(kb-1)*ldb+32-1]
	packBRows32AVX512(&dst[0], &src[0], ldb, kb)
}

// packBColsStrips transposes nr (a multiple of 16) columns of kb floats,
// ldb apart in src, into kb rows of nr in dst, 16 columns at a time.
func packBColsStrips(dst, src []float32, ldb, kb, nr int) {
	kb8 := kb / 8
	if kb8 == 0 {
		packBColsGo(dst, src, ldb, kb, nr, nr)
		return
	}
	_, _ = dst[kb*nr-1], src[(nr-1)*ldb+kb-1]
	for s := 0; s < nr; s += 16 {
		packBCols16AVX2(&dst[s], &src[s*ldb], ldb, nr, kb8)
	}
	if done := kb8 * 8; done < kb {
		packBColsGo(dst[done*nr:], src[done:], ldb, kb-done, nr, nr)
	}
}

// packACols6 packs panels whole 6-row A panels of depth kb from a
// transposed A whose first needed element is src[0] (see packAColsGo).
func packACols6(dst, src []float32, lda, kb, panels int) {
	_, _ = dst[panels*kb*6-1], src[(kb-1)*lda+panels*6-1]
	packACols6AVX2(&dst[0], &src[0], lda, kb, panels)
}

// packACols12 is packACols6 for 12-row panels.
func packACols12(dst, src []float32, lda, kb, panels int) {
	_, _ = dst[panels*kb*12-1], src[(kb-1)*lda+panels*12-1]
	packACols12AVX2(&dst[0], &src[0], lda, kb, panels)
}

// dot4AVX2 writes to out the dot products of the 8·k8 floats at x with
// the four rows of as many floats at w, ldw floats apart (dot4's kernel;
// k8 ≥ 1).
//
//go:noescape
func dot4AVX2(k8 int, x, w *float32, ldw int, out *[4]float32)
