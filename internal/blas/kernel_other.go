//go:build !amd64 || purego

package blas

// asmName names the assembly micro-kernel; there is none on this build.
const asmName = "none"

// useAsm is false: this build has no assembly kernel, Sgemm runs the
// pure-Go fallback.
var useAsm = false

// asmKernel stands in for the missing assembly kernel so the driver still
// compiles; it is never called since useAsm is false.
var asmKernel kernelFunc = kernelGo

// packBRows copies kb rows of 16 floats, ldb apart in src, into dst.
func packBRows(dst, src []float32, ldb, kb int) { packBRowsGo(dst, src, ldb, kb) }

// packBCols transposes 16 columns of kb floats, ldb apart in src, into kb
// rows of 16 in dst.
func packBCols(dst, src []float32, ldb, kb int) { packBColsGo(dst, src, ldb, kb, nr) }

// packACols packs panels whole A panels of depth kb from a transposed A
// whose first needed element is src[0] (see packAColsGo).
func packACols(dst, src []float32, lda, kb, panels int) {
	packAColsGo(dst, src, lda, kb, panels)
}

// dot4AVX2 stands in for the missing assembly dot kernel so that dot4
// compiles; it is never called since useAsm is false.
func dot4AVX2(k8 int, x, w *float32, ldw int, out *[4]float32) {
	panic("blas: dot4AVX2 called without the assembly kernel")
}
