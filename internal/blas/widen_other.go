//go:build !amd64 || purego

package blas

import "unsafe"

// The Go twins of the kernels of widen_amd64.s, under their names, for
// builds without the assembly; keep in step with widen_amd64.go.

// widenAsm512 and widenAsm2 are false: widen16 takes its Go loop.
var (
	widenAsm512 = false
	widenAsm2   = false
)

func widen16AVX512(dst *float32, src *uint16, n int) {
	widen16Go(unsafe.Slice(dst, n), unsafe.Slice(src, n))
}

func widen16AVX2(dst *float32, src *uint16, n int) {
	widen16Go(unsafe.Slice(dst, n), unsafe.Slice(src, n))
}
