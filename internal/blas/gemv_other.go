//go:build !amd64 || purego

package blas

// gemv1AVX512 stands in for the missing assembly kernel so that gemv1
// compiles; it is never called since no assembly path is active.
func gemv1AVX512(rows, k16 int, x, w *float32, ldw int, out *float32) {
	panic("blas: gemv1AVX512 called without the assembly kernel")
}

// gemv2AVX512 stands in for the missing assembly kernel.
func gemv2AVX512(pairs, k16 int, x, w *float32, ldw, off int, out *float32) {
	panic("blas: gemv2AVX512 called without the assembly kernel")
}

// gemvBF16AVX512 stands in for the missing assembly kernel.
func gemvBF16AVX512(rows, k32 int, xe, xo *float32, w *uint16, ldw, pf int, c *float32) {
	panic("blas: gemvBF16AVX512 called without the assembly kernel")
}

// gemvBF16Asm is false: gemvBF16AVX512 is missing.
var gemvBF16Asm = false
