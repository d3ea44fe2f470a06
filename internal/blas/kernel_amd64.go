//go:build amd64 && !purego

package blas

import "github.com/wickml/wick/internal/cpu"

// asmName names the assembly micro-kernel in Kernel's report.
const asmName = "avx2+fma"

// useAsm says whether Sgemm runs the AVX2+FMA kernel; tests switch it off to
// exercise the fallback.
var useAsm = cpu.HasAVX2FMA

// asmKernel is the assembly micro-kernel (see kernelFunc).
var asmKernel kernelFunc = sgemmKernel6x16AVX2

// sgemmKernel6x16AVX2 is the 6×16 AVX2+FMA micro-kernel of kernel_amd64.s,
// with kernelFunc's contract.
//
//go:noescape
func sgemmKernel6x16AVX2(k int, a *float32, rsA, csA int, b *float32, rsB int, c *float32, ldc int, acc int)

// Packing routines of pack_amd64.s (see pack.go for the layouts).
//
//go:noescape
func packBRows16AVX2(dst, src *float32, ldb, kb int)

//go:noescape
func packBCols16AVX2(dst, src *float32, ldb, kb8 int)

//go:noescape
func packACols6AVX2(dst, src *float32, lda, kb, panels int)

// packBRows copies kb rows of 16 floats, ldb apart in src, into dst.
func packBRows(dst, src []float32, ldb, kb int) {
	if !useAsm {
		packBRowsGo(dst, src, ldb, kb)
		return
	}
	_, _ = dst[kb*nr-1], src[(kb-1)*ldb+nr-1]
	packBRows16AVX2(&dst[0], &src[0], ldb, kb)
}

// packBCols transposes 16 columns of kb floats, ldb apart in src, into kb
// rows of 16 in dst.
func packBCols(dst, src []float32, ldb, kb int) {
	kb8 := kb / 8
	if !useAsm || kb8 == 0 {
		packBColsGo(dst, src, ldb, kb, nr)
		return
	}
	_, _ = dst[kb*nr-1], src[(nr-1)*ldb+kb-1]
	packBCols16AVX2(&dst[0], &src[0], ldb, kb8)
	if done := kb8 * 8; done < kb {
		packBColsGo(dst[done*nr:], src[done:], ldb, kb-done, nr)
	}
}

// packACols packs panels whole A panels of depth kb from a transposed A
// whose first needed element is src[0] (see packAColsGo).
func packACols(dst, src []float32, lda, kb, panels int) {
	if !useAsm {
		packAColsGo(dst, src, lda, kb, panels)
		return
	}
	_, _ = dst[panels*kb*mr-1], src[(kb-1)*lda+panels*mr-1]
	packACols6AVX2(&dst[0], &src[0], lda, kb, panels)
}

// dot4AVX2 writes to out the dot products of the 8·k8 floats at x with
// the four rows of as many floats at w, ldw floats apart (dot4's kernel;
// k8 ≥ 1).
//
//go:noescape
func dot4AVX2(k8 int, x, w *float32, ldw int, out *[4]float32)
