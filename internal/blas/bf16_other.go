//go:build !amd64 || purego

package blas

import "unsafe"

// The Go twins of the bfloat16 kernels of bf16_amd64.s, under their names,
// for builds without the assembly; keep in step with bf16_amd64.go.

// dpbf16Asm and dot16Asm are false: the bfloat16 products take their Go
// paths (the twins below are for completeness and for tests).
var (
	dpbf16Asm = false
	dot16Asm  = false
)

func dpbf16Kernel12x32(kp int, a *uint16, rs, gs int, b *uint32, c *float32, ldc, acc int) {
	dpbf16Go(kp, a, rs, gs, unsafe.Slice(b, 32*kp), unsafe.Slice(c, 11*ldc+32), ldc, acc&dpAdd != 0)
}

func dot4BF16AVX2(k16 int, xe, xo *float32, w *uint16, ldw int, out *[4]float32) {
	dot4BF16Go(unsafe.Slice(xe, 8*k16), unsafe.Slice(xo, 8*k16), unsafe.Slice(w, 3*ldw+16*k16), ldw, out)
}
