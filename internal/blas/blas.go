// Package blas holds Wick's single-precision matrix multiply for the CPU.
package blas

import (
	"runtime"
	"sync"
)

// Sgemm computes C = op(A)·op(B) (or C += op(A)·op(B) when accumulate is
// set) for row-major matrices: op(A) is m×k, op(B) is k×n, C is m×n with row
// stride ldc. When transA is set A is stored k×m (so op(A) = Aᵀ), likewise
// for B. threads bounds the goroutines used (≤ 0 means GOMAXPROCS).
func Sgemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool, threads int) {
	if m == 0 || n == 0 {
		return
	}
	if !accumulate {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
	}
	if k == 0 {
		return
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	// Work is split over row blocks of C; each runs the blocked kernel.
	flops := m * n * k
	parts := min(threads, max(1, flops/(1<<18)), (m+3)/4)
	if parts <= 1 {
		gemmRef(transA, transB, 0, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	var wg sync.WaitGroup
	rows := (m + parts - 1) / parts
	for lo := 0; lo < m; lo += rows {
		hi := min(lo+rows, m)
		wg.Add(1)
		go func() {
			defer wg.Done()
			gemmRef(transA, transB, lo, hi, n, k, a, lda, b, ldb, c, ldc)
		}()
	}
	wg.Wait()
}

// gemmRef is the portable kernel: it packs blocks of op(B) into contiguous
// rows and accumulates C's rows [i0, i1) with an axpy inner loop.
func gemmRef(transA, transB bool, i0, i1, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	const kc, nc = 256, 512
	pack := make([]float32, kc*nc)
	for p0 := 0; p0 < k; p0 += kc {
		p1 := min(p0+kc, k)
		for j0 := 0; j0 < n; j0 += nc {
			j1 := min(j0+nc, n)
			w := j1 - j0
			// pack op(B)[p0:p1, j0:j1] row-major with width w
			for p := p0; p < p1; p++ {
				row := pack[(p-p0)*w : (p-p0+1)*w]
				if transB {
					for j := range row {
						row[j] = b[(j0+j)*ldb+p]
					}
				} else {
					copy(row, b[p*ldb+j0:p*ldb+j1])
				}
			}
			for i := i0; i < i1; i++ {
				crow := c[i*ldc+j0 : i*ldc+j1]
				for p := p0; p < p1; p++ {
					var av float32
					if transA {
						av = a[p*lda+i]
					} else {
						av = a[i*lda+p]
					}
					brow := pack[(p-p0)*w : (p-p0+1)*w]
					for j, bv := range brow {
						crow[j] += av * bv
					}
				}
			}
		}
	}
}
