//go:build !amd64 || purego

package blas

// asmPaths is empty: this build has no assembly kernels, Sgemm runs the
// pure-Go fallback.
var asmPaths []*path
