//go:build !amd64 || purego

package blas

// dot4x3AVX2 stands in for the missing assembly kernel so that dot4x3
// compiles; it is never called since no assembly path is active.
func dot4x3AVX2(k8 int, x *float32, ldx int, w *float32, ldw int, out *[12]float32) {
	panic("blas: dot4x3AVX2 called without the assembly kernel")
}

// dot4x1AVX512 … dot4x6AVX512 stand in for the missing assembly kernels.
func dot4x1AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int) {
	panic("blas: dot4x1AVX512 called without the assembly kernel")
}

func dot4x2AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int) {
	panic("blas: dot4x2AVX512 called without the assembly kernel")
}

func dot4x3AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int) {
	panic("blas: dot4x3AVX512 called without the assembly kernel")
}

func dot4x4AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int) {
	panic("blas: dot4x4AVX512 called without the assembly kernel")
}

func dot4x5AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int) {
	panic("blas: dot4x5AVX512 called without the assembly kernel")
}

func dot4x6AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int) {
	panic("blas: dot4x6AVX512 called without the assembly kernel")
}
