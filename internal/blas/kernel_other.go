//go:build !amd64 || purego

package blas

// asmPaths is empty: this build has no assembly kernels, Sgemm runs the
// pure-Go fallback.
var asmPaths []*path

// dot4AVX2 stands in for the missing assembly dot kernel so that dot4
// compiles; it is never called since no assembly path is active.
func dot4AVX2(k8 int, x, w *float32, ldw int, out *[4]float32) {
	panic("blas: dot4AVX2 called without the assembly kernel")
}
