package blas

// Packed layouts (what the micro-kernel reads):
//
//	A panel, A not transposed: mr rows of op(A) × kb columns, row by row
//	         (the kernel reads it with rsA = kb, csA = 1):
//	         ap[r*kb + p] = op(A)[i+r][p0+p]
//	A panel, A transposed: the same values column by column
//	         (rsA = 1, csA = mr):
//	         ap[p*mr + r] = op(A)[i+r][p0+p]
//	B panel: kb rows of op(B) × nr columns, row by row (rsB = nr):
//	         bp[p*nr + j] = op(B)[p0+p][j+j0]
//
// Rows of A and columns of B past the matrix's edge are zero. Each layout
// is the one that the operand's storage order copies into fastest: whole
// rows where op(A)'s rows are contiguous, 8×8 transposes for a transposed B.
// op(A)[i][p] is a[i*lda+p], or a[p*lda+i] when A is transposed; op(B)[p][j]
// is b[p*ldb+j], or b[j*ldb+p] when B is transposed.

// packedAStrides returns the kernel's strides for a packed A panel of depth
// kb.
func (pa *path) packedAStrides(transA bool, kb int) (rsA, csA int) {
	if transA {
		return 1, pa.mr
	}
	return kb, 1
}

// packA packs rows [i0, i0+rows) and columns [p0, p0+kb) of op(A) into
// ceil(rows/mr) consecutive panels of dst.
func (pa *path) packA(transA bool, a []float32, lda, i0, rows, p0, kb int, dst []float32) {
	mr := pa.mr
	start := 0
	if transA && rows >= mr {
		// whole panels in one sweep over the stored rows
		full := rows / mr
		pa.packACols(dst, a[p0*lda+i0:], lda, kb, full)
		start = full * mr
	}
	for ip := start; ip < rows; ip += mr {
		r := min(mr, rows-ip)
		d := dst[(ip/mr)*kb*mr:][:kb*mr]
		i := i0 + ip
		switch {
		case !transA:
			for rr := range r {
				copy(d[rr*kb:(rr+1)*kb], a[(i+rr)*lda+p0:][:kb])
			}
			clear(d[r*kb:])
		default:
			clear(d)
			for p := range kb {
				copy(d[p*mr:p*mr+r], a[(p0+p)*lda+i:][:r])
			}
		}
	}
}

// packB packs columns [j0, j0+cols) and rows [p0, p0+kb) of op(B) into
// ceil(cols/nr) consecutive panels of dst.
func (pa *path) packB(transB bool, b []float32, ldb, p0, kb, j0, cols int, dst []float32) {
	nr := pa.nr
	for jp := 0; jp < cols; jp += nr {
		w := min(nr, cols-jp)
		d := dst[(jp/nr)*kb*nr:][:kb*nr]
		j := j0 + jp
		switch {
		case !transB && w == nr:
			pa.packBRows(d, b[p0*ldb+j:], ldb, kb)
		case !transB:
			clear(d)
			for p := range kb {
				copy(d[p*nr:p*nr+w], b[(p0+p)*ldb+j:][:w])
			}
		case w == nr:
			pa.packBCols(d, b[j*ldb+p0:], ldb, kb)
		default:
			clear(d)
			packBColsGo(d, b[j*ldb+p0:], ldb, kb, w, nr)
		}
	}
}

// packBRowsGo copies kb rows of nr floats, ldb apart in src, into dst.
func packBRowsGo(dst, src []float32, ldb, kb, nr int) {
	for p := range kb {
		copy(dst[p*nr:p*nr+nr], src[p*ldb:][:nr])
	}
}

// packBColsGo writes w columns of kb floats, ldb apart in src, as the first
// w entries of kb rows of nr in dst.
func packBColsGo(dst, src []float32, ldb, kb, w, nr int) {
	for jj := range w {
		s := src[jj*ldb:][:kb]
		for p, v := range s {
			dst[p*nr+jj] = v
		}
	}
}

// packAColsGo packs panels whole A panels of depth kb from a transposed A
// whose first needed element is src[0]:
// dst[q*kb*mr + p*mr + r] = src[p*lda + q*mr + r].
func packAColsGo(dst, src []float32, lda, kb, panels, mr int) {
	for p := range kb {
		s := src[p*lda:][:panels*mr]
		for q := range panels {
			copy(dst[q*kb*mr+p*mr:][:mr], s[q*mr:][:mr])
		}
	}
}
