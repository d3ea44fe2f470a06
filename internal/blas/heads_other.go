//go:build !amd64 || purego

package blas

// headDotsAVX512 stands in for the missing assembly kernel; headsAsm is
// false without it.
func headDotsAVX512(seq, heads, k16 int, q, k *float32, ldk int, p *float32, ldp int) {
	panic("blas: headDotsAVX512 called without the assembly kernel")
}

// headAxpysAVX512 stands in for the missing assembly kernel.
func headAxpysAVX512(rows, heads, k16 int, p *float32, ldp int, v *float32, ldv int, acc *float32) {
	panic("blas: headAxpysAVX512 called without the assembly kernel")
}
