package blas

// gemmRef is the portable kernel and the reference the fast paths are tested
// against: it packs blocks of op(B) into contiguous rows and accumulates C's
// rows [i0, i1) with an axpy inner loop. C must already hold the value to
// accumulate onto (zero for a plain product).
func gemmRef(transA, transB bool, i0, i1, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	const kc, nc = 256, 512
	pack := make([]float32, min(kc, k)*min(nc, n))
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
