//go:build openblas && cgo

// Package openblas calls the system's OpenBLAS sgemm through cgo, so that
// internal/blas's benchmarks can time Wick's Sgemm and OpenBLAS's in one
// process, call against call (build with -tags openblas; Debian's
// libopenblas-dev).
package openblas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import "fmt"

// SetThreads sets the number of threads OpenBLAS's calls use.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// Core returns the name of the kernels OpenBLAS chose (or was told to use
// by OPENBLAS_CORETYPE).
func Core() string { return C.GoString(C.openblas_get_corename()) }

// Sgemm computes C = op(A)·op(B) (row-major, no accumulation) with
// OpenBLAS's cblas_sgemm; the arguments are those of blas.Sgemm.
//
// Sgemm panics if a size is not positive or a slice is too short for the
// matrix it holds (OpenBLAS would read or write past it).
func Sgemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m <= 0 || n <= 0 || k <= 0 {
		panic(fmt.Sprintf("openblas: Sgemm: sizes m=%d n=%d k=%d, want positive", m, n, k))
	}
	check("A", transA, m, k, a, lda)
	check("B", transB, k, n, b, ldb)
	check("C", false, m, n, c, ldc)
	ta, tb := C.enum_CBLAS_TRANSPOSE(C.CblasNoTrans), C.enum_CBLAS_TRANSPOSE(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k), 1,
		(*C.float)(&a[0]), C.blasint(lda), (*C.float)(&b[0]), C.blasint(ldb), 0, (*C.float)(&c[0]), C.blasint(ldc))
}

// check panics unless s holds an r×w matrix (w×r stored when trans) with
// row stride ld.
func check(name string, trans bool, r, w int, s []float32, ld int) {
	if trans {
		r, w = w, r
	}
	if ld < w || len(s) < (r-1)*ld+w {
		panic(fmt.Sprintf("openblas: Sgemm: %s (%d×%d stored, stride %d) needs %d elements and a stride of at least %d, has %d", name, r, w, ld, (r-1)*ld+w, w, len(s)))
	}
}
