package blas

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/parallel"
)

// Products with bfloat16 operands, accumulated in float32 (PyTorch's CPU
// bfloat16 matmul accumulates in float32 and rounds once; the caller
// rounds C). Three paths, chosen per call:
//
//   - a few rows of A times a bfloat16 Bᵀ (a Linear layer's weight [out,
//     in] at generation): dot products of W's rows read in place, widened
//     to float32 as they are loaded (gemv1BF16AVX512 where AVX-512 runs,
//     dot4BF16AVX2 where AVX2 does, else Go in four chains; exact widening
//     and float32 sums, never a bfloat16 rounding of x), so a token reads
//     the weight's 2 bytes per element once;
//   - both operands bfloat16 where AVX512_BF16 runs: A and B packed in
//     pairs of depths and multiplied by VDPBF16PS (dpbf16Kernel12x32),
//     twice the multiply-adds of a float32 FMA per instruction;
//   - otherwise (a float32 operand, or no AVX512_BF16): blocks of depth
//     widened to float32 and multiplied by Sgemm, so a bfloat16 product
//     costs the float32 one plus the widening, never more (PyTorch 1.13 on
//     AVX2-only CPUs runs bfloat16 matmuls 44–499× slower than float32,
//     pytorch/pytorch#146508).
//
// The paths sum in different orders (and VDPBF16PS flushes subnormal
// inputs and results to zero), so results differ by float32 rounding.

// Mat16 is one operand of GemmBF16: float32 elements (F) or bfloat16 bit
// patterns (H), exactly one of the two set, stored row-major with row
// stride LD (transposed when Trans: op(M) = Mᵀ).
type Mat16 struct {
	F     []float32
	H     []uint16
	LD    int
	Trans bool
}

// len returns the operand's element count.
func (o Mat16) len() int {
	if o.H != nil {
		return len(o.H)
	}
	return len(o.F)
}

// at returns element (i, j) of op(M) as float32.
func (o Mat16) at(i, j int) float32 {
	if o.Trans {
		i, j = j, i
	}
	if o.H != nil {
		return bf16(o.H[i*o.LD+j])
	}
	return o.F[i*o.LD+j]
}

// bf16 widens a bfloat16 bit pattern to float32 (exact).
func bf16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// check panics unless o holds a rows×cols op(M) of exactly one kind.
func (o Mat16) check(name string, rows, cols int) {
	if (o.F == nil) == (o.H == nil) {
		panic(fmt.Sprintf("blas: GemmBF16: %s must have exactly one of F and H set", name))
	}
	r, w := rows, cols
	if o.Trans {
		r, w = w, r
	}
	if o.LD < max(w, 1) {
		panic(fmt.Sprintf("blas: GemmBF16: leading dimension of %s is %d, less than its stored width %d", name, o.LD, w))
	}
	if need := (r-1)*o.LD + w; o.len() < need {
		panic(fmt.Sprintf("blas: GemmBF16: %s (%d×%d stored, stride %d) needs %d elements, has %d", name, r, w, o.LD, need, o.len()))
	}
}

// GemmBF16 computes C = op(A)·op(B) for op(A) m×k and op(B) k×n, either
// of them bfloat16, with float32 accumulation into the float32 C (row
// stride ldc); threads bounds the goroutines used (≤ 0: all of the pool's).
// With both operands float32 it is Sgemm.
//
// GemmBF16 panics if a size is negative, an operand has both or neither
// of F and H, or a matrix does not fit its slice.
func GemmBF16(m, n, k int, a, b Mat16, c []float32, ldc int, threads int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("blas: GemmBF16: negative size m=%d n=%d k=%d", m, n, k))
	}
	if m == 0 || n == 0 {
		return
	}
	checkMatrix("C", false, m, n, c, ldc)
	if k == 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	a.check("A", m, k)
	b.check("B", k, n)
	if a.F != nil && b.F != nil {
		Sgemm(a.Trans, b.Trans, m, n, k, a.F, a.LD, b.F, b.LD, c, ldc, false, threads)
		return
	}
	if threads <= 0 {
		threads = parallel.Workers()
	}
	gemv := m <= gemvMaxRows && b.H != nil && b.Trans
	if gemv && n*k < gemvMinParallel || !gemv && 2*float64(m)*float64(n)*float64(k) < minParallelFlops {
		threads = 1 // a few rows' products are bound by the weight's reads, not flops (see gemvMinParallel)
	}
	switch {
	case gemv:
		gemvBF16(m, n, k, a, b, c, ldc, threads)
	case a.H != nil && b.H != nil && dpbf16Asm && m > gemvMaxRows:
		gemmDPBF16(m, n, k, a, b, c, ldc, threads)
	default:
		gemmWiden(m, n, k, a, b, c, ldc, threads)
	}
}

// widenDepth and widenCols are the depths and the columns of op(B) of the
// blocks that gemmWiden widens at a time: a block of a bfloat16 B is then
// at most 512 KiB of float32, which stays in L2 while Sgemm packs it.
const (
	widenDepth = 256
	widenCols  = 512
)

// gemmWiden computes C = op(A)·op(B) in blocks of widenDepth depths and,
// where B is bfloat16, widenCols columns: the bfloat16 operands' blocks
// widened to float32, each block's product added into C by Sgemm. A
// float32 operand is read in place.
func gemmWiden(m, n, k int, a, b Mat16, c []float32, ldc int, threads int) {
	var abuf, bbuf *[]float32
	if a.H != nil {
		abuf = getBuf(&aBufs, m*min(k, widenDepth))
		defer aBufs.Put(abuf)
	}
	nb := n
	if b.H != nil {
		nb = min(n, widenCols)
		bbuf = getBuf(&bBufs, min(k, widenDepth)*nb)
		defer bBufs.Put(bbuf)
	}
	for p0 := 0; p0 < k; p0 += widenDepth {
		kb := min(widenDepth, k-p0)
		ta, as, lda := blockOf(a, abuf, p0, kb, 0, m, true)
		for j0 := 0; j0 < n; j0 += nb {
			cols := min(nb, n-j0)
			tb, bs, ldb := blockOf(b, bbuf, p0, kb, j0, cols, false)
			Sgemm(ta, tb, m, cols, kb, as, lda, bs, ldb, c[j0:], ldc, p0 > 0, threads)
		}
	}
}

// blockOf returns depths [p0, p0+kb) and rows [r0, r0+rows) of the other
// dim (op(A)'s rows, op(B)'s columns) of an operand as Sgemm takes it:
// float32 in place, or bfloat16 widened into buf in the orientation it is
// stored in (so that the widening reads rows, and Sgemm sees a transposed
// B as transposed: its dot products for few-row products apply).
func blockOf(o Mat16, buf *[]float32, p0, kb, r0, rows int, left bool) (trans bool, s []float32, ld int) {
	// the block stored depth-minor (op(A) stored m×k, op(B) stored n×k)
	// or depth-major
	depthMinor := left != o.Trans
	if o.F != nil {
		if depthMinor {
			return o.Trans, o.F[r0*o.LD+p0:], o.LD
		}
		return o.Trans, o.F[p0*o.LD+r0:], o.LD
	}
	d := (*buf)[:rows*kb]
	if depthMinor {
		for i := range rows {
			widen16(d[i*kb:(i+1)*kb], o.H[(r0+i)*o.LD+p0:])
		}
		return o.Trans, d, kb
	}
	for p := range kb {
		widen16(d[p*rows:(p+1)*rows], o.H[(p0+p)*o.LD+r0:])
	}
	return o.Trans, d, rows
}

// widen16 writes the float32 values of the bfloat16 patterns src into dst.
func widen16(dst []float32, src []uint16) {
	src = src[:len(dst)]
	for i, h := range src {
		dst[i] = math.Float32frombits(uint32(h) << 16)
	}
}

// gemvBF16 computes C = op(A)·Bᵀ for a few rows of A (m ≤ gemvMaxRows) and
// B stored n×k in bfloat16: op(A)'s rows as float32 (widened once if
// bfloat16), split into their even and odd elements for dot4BF16AVX2 (or
// gemv1BF16AVX512 on AVX-512, see gemvWideBF16), then dot products with
// B's rows four at a time, B's rows split over at most threads
// goroutines.
func gemvBF16(m, n, k int, a, b Mat16, c []float32, ldc int, threads int) {
	h := k / 16 * 8 // even (and odd) elements the kernel takes
	buf := getBuf(&gemvBufs, m*k+2*m*h)
	defer gemvBufs.Put(buf)
	x, xeo := (*buf)[:m*k], (*buf)[m*k:]
	for i := range m {
		row := x[i*k : (i+1)*k]
		switch {
		case a.F != nil && !a.Trans:
			copy(row, a.F[i*a.LD:i*a.LD+k])
		case a.H != nil && !a.Trans:
			widen16(row, a.H[i*a.LD:])
		default:
			for p := range row {
				row[p] = a.at(i, p)
			}
		}
	}
	for i := range m {
		xe, xo := xeo[2*i*h:(2*i+1)*h], xeo[(2*i+1)*h:(2*i+2)*h]
		for j := range h {
			xe[j], xo[j] = x[i*k+2*j], x[i*k+2*j+1]
		}
	}
	w, ldw := b.H, b.LD
	quads := ceilDiv(n, 4)
	g := quads
	if threads > 1 {
		g = max(gemvQuads, grain(quads, threads))
	}
	wide := gemvBF16Asm && dot16Asm && k >= 32
	parallel.For(quads, g, func(lo, hi int) {
		if wide {
			for i := range m {
				xi, xe, xo := x[i*k:(i+1)*k], xeo[2*i*h:(2*i+1)*h], xeo[(2*i+1)*h:(2*i+2)*h]
				gemvWideBF16(xi, xe, xo, w, ldw, 4*lo, min(4*hi, n), c[i*ldc:])
			}
			return
		}
		var out [4]float32
		for j := 4 * lo; j < min(4*hi, n); j += 4 {
			rows := min(4, n-j)
			for i := range m {
				xi := x[i*k : (i+1)*k]
				if rows == 4 {
					dot4BF16(xi, xeo[2*i*h:(2*i+1)*h], xeo[(2*i+1)*h:(2*i+2)*h], w[j*ldw:], ldw, &out)
				} else {
					for r := range rows {
						out[r] = dotBF16Go(xi, w[(j+r)*ldw:])
					}
				}
				copy(c[i*ldc+j:i*ldc+j+rows], out[:rows])
			}
		}
	})
}

// dot4BF16 writes to out the dot products of x with the four bfloat16 rows
// of w that start ldw apart: dot4BF16AVX2 on the first multiple of 16
// depths (xe and xo: x's even and odd elements there) where AVX2 runs,
// then Go.
func dot4BF16(x, xe, xo []float32, w []uint16, ldw int, out *[4]float32) {
	k := len(x)
	_ = w[3*ldw+k-1]
	k16 := len(xe) / 8
	if dot16Asm && k16 > 0 {
		dot4BF16AVX2(k16, &xe[0], &xo[0], &w[0], ldw, out)
	} else {
		*out = [4]float32{}
		k16 = 0
	}
	p0 := k16 * 16
	w0, w1, w2, w3 := w[p0:k], w[ldw+p0:ldw+k], w[2*ldw+p0:2*ldw+k], w[3*ldw+p0:3*ldw+k]
	var s0, s1, s2, s3 float32
	for p, v := range x[p0:] {
		s0 += v * bf16(w0[p])
		s1 += v * bf16(w1[p])
		s2 += v * bf16(w2[p])
		s3 += v * bf16(w3[p])
	}
	out[0] += s0
	out[1] += s1
	out[2] += s2
	out[3] += s3
}

// dot4BF16Go is dot4BF16AVX2's Go twin: the even and the odd elements in
// one chain per row.
func dot4BF16Go(xe, xo []float32, w []uint16, ldw int, out *[4]float32) {
	for r := range 4 {
		var s float32
		for j, v := range xe {
			s += v*bf16(w[r*ldw+2*j]) + xo[j]*bf16(w[r*ldw+2*j+1])
		}
		out[r] = s
	}
}

// dotBF16Go returns the dot product of x with the bfloat16 row w
// (len(w) ≥ len(x)).
func dotBF16Go(x []float32, w []uint16) float32 {
	var s float32
	for p, v := range x {
		s += v * bf16(w[p])
	}
	return s
}

// The blocking of gemmDPBF16: 12×32 tiles (24 ZMM accumulators); depth
// blocks of up to 2·dpPairs (768, GPT-2's width, in one: an A micro-panel
// of 12 rows is then at most 18 KiB, in L1 while B's panels stream past it);
// column blocks of B that fill half of L2 (dpBlockBytes where CPUID does not
// tell), each packed once and multiplied by every row panel of A.
const (
	dpMR         = 12
	dpNR         = 32
	dpPairs      = 384
	dpBlockBytes = 512 << 10
)

// gemmDPBF16 computes C = op(A)·op(B) for bfloat16 A and B with the
// AVX512_BF16 micro-kernel. Per depth block: all of op(A) packed in row
// panels of 12 (packA16), then per column block of B its panels of 32
// columns packed (packB16) and the row panels, split over at most threads
// goroutines, multiplied by each of them: whole tiles straight into C
// (stored for the first depth block, added to after), edge tiles through a
// scratch tile.
func gemmDPBF16(m, n, k int, a, b Mat16, c []float32, ldc int, threads int) {
	panels, rowPanels := ceilDiv(n, dpNR), ceilDiv(m, dpMR)
	kpMax := (min(k, 2*dpPairs) + 1) / 2
	l2 := dpBlockBytes
	if cpu.L2 > 0 {
		l2 = cpu.L2 / 2
	}
	nc := max(1, min(panels, l2/(kpMax*dpNR*4))) // panels per column block
	ap := make([]uint32, rowPanels*kpMax*dpMR)
	bp := make([]uint32, nc*kpMax*dpNR)
	g := rowPanels
	if threads > 1 {
		g = max(1, grain(rowPanels, threads))
	}
	for p0 := 0; p0 < k; p0 += 2 * dpPairs {
		kb := min(2*dpPairs, k-p0)
		kp := (kb + 1) / 2
		acc := 0
		if p0 > 0 {
			acc = 1
		}
		parallel.For(rowPanels, g, func(lo, hi int) {
			for ip := lo; ip < hi; ip++ {
				packA16(a, ip*dpMR, min(dpMR, m-ip*dpMR), p0, kb, ap[ip*kp*dpMR:][:kp*dpMR])
			}
		})
		for jb := 0; jb < panels; jb += nc {
			np := min(nc, panels-jb)
			parallel.For(np, max(1, grain(np, threads)), func(lo, hi int) {
				for q := lo; q < hi; q++ {
					j0 := (jb + q) * dpNR
					packB16(b, p0, kb, j0, min(dpNR, n-j0), bp[q*kp*dpNR:][:kp*dpNR])
				}
			})
			parallel.For(rowPanels, g, func(lo, hi int) {
				var tile [dpMR * dpNR]float32
				for ip := lo; ip < hi; ip++ {
					i0 := ip * dpMR
					rows := min(dpMR, m-i0)
					apan := &ap[ip*kp*dpMR]
					for q := range np {
						j0 := (jb + q) * dpNR
						cols := min(dpNR, n-j0)
						bpan := &bp[q*kp*dpNR]
						if rows == dpMR && cols == dpNR {
							dpbf16Kernel12x32(kp, apan, bpan, &c[i0*ldc+j0], ldc, acc)
							continue
						}
						dpbf16Kernel12x32(kp, apan, bpan, &tile[0], dpNR, 0)
						for i := range rows {
							crow := c[(i0+i)*ldc+j0 : (i0+i)*ldc+j0+cols]
							trow := tile[i*dpNR : i*dpNR+cols]
							if acc == 0 {
								copy(crow, trow)
							} else {
								for j, v := range trow {
									crow[j] += v
								}
							}
						}
					}
				}
			})
		}
	}
}

// pair16 is the word of two bfloat16 values that VDPBF16PS multiplies as a
// pair: lo (the even depth) in the low half.
func pair16(lo, hi uint16) uint32 { return uint32(lo) | uint32(hi)<<16 }

// h16 returns bfloat16 element (i, j) of op(M) (0 past its edge: the
// padding of the last pair and of the panels).
func (o Mat16) h16(i, j, rows, cols int) uint16 {
	if i >= rows || j >= cols {
		return 0
	}
	if o.Trans {
		return o.H[j*o.LD+i]
	}
	return o.H[i*o.LD+j]
}

// packA16 writes rows [i0, i0+rows) and depths [p0, p0+kb) of op(A) into
// dst as (kb+1)/2 groups of 12 pair words, rows past the edge zero.
func packA16(a Mat16, i0, rows, p0, kb int, dst []uint32) {
	kp := (kb + 1) / 2
	if !a.Trans && rows == dpMR && kb%2 == 0 {
		// pairs of depths are adjacent in A's rows
		for i := range dpMR {
			row := a.H[(i0+i)*a.LD+p0:][:kb]
			for q := range kp {
				dst[q*dpMR+i] = pair16(row[2*q], row[2*q+1])
			}
		}
		return
	}
	for q := range kp {
		g := dst[q*dpMR : (q+1)*dpMR]
		for i := range dpMR {
			g[i] = pair16(a.h16(i0+i, p0+2*q, i0+rows, p0+kb), a.h16(i0+i, p0+2*q+1, i0+rows, p0+kb))
		}
	}
}

// packB16 writes depths [p0, p0+kb) and columns [j0, j0+cols) of op(B)
// into dst as (kb+1)/2 groups of 32 pair words, columns past the edge zero.
func packB16(b Mat16, p0, kb, j0, cols int, dst []uint32) {
	kp := (kb + 1) / 2
	if cols == dpNR && kb%2 == 0 {
		if b.Trans {
			// B stored n×k (a weight): a column's pairs are adjacent,
			// one little-endian word each where the column starts on a
			// word
			for j := range dpNR {
				col := b.H[(j0+j)*b.LD+p0:][:kb]
				if uintptr(unsafe.Pointer(&col[0]))%4 == 0 {
					for q, v := range unsafe.Slice((*uint32)(unsafe.Pointer(&col[0])), kp) {
						dst[q*dpNR+j] = v
					}
					continue
				}
				for q := range kp {
					dst[q*dpNR+j] = pair16(col[2*q], col[2*q+1])
				}
			}
			return
		}
		for q := range kp {
			r0 := b.H[(p0+2*q)*b.LD+j0:][:dpNR]
			r1 := b.H[(p0+2*q+1)*b.LD+j0:][:dpNR]
			g := dst[q*dpNR : (q+1)*dpNR]
			for j := range g {
				g[j] = pair16(r0[j], r1[j])
			}
		}
		return
	}
	for q := range kp {
		g := dst[q*dpNR : (q+1)*dpNR]
		for j := range dpNR {
			g[j] = pair16(b.h16(p0+2*q, j0+j, p0+kb, j0+cols), b.h16(p0+2*q+1, j0+j, p0+kb, j0+cols))
		}
	}
}

// dpbf16Go is dpbf16Kernel12x32's Go twin (rows of c ldc apart, added to
// if acc): each lane adds the high pair's product, then the low pair's, to
// its float32 sum, as VDPBF16PS does (but without its flushing of
// subnormals), and the tile's sum to C at the end.
func dpbf16Go(kp int, a, b []uint32, c []float32, ldc int, acc bool) {
	var t [dpMR * dpNR]float32
	for q := range kp {
		for i := range dpMR {
			w := a[q*dpMR+i]
			alo, ahi := bf16(uint16(w)), bf16(uint16(w>>16))
			for j := range dpNR {
				v := b[q*dpNR+j]
				s := t[i*dpNR+j] + ahi*bf16(uint16(v>>16))
				t[i*dpNR+j] = s + alo*bf16(uint16(v))
			}
		}
	}
	for i := range dpMR {
		row := c[i*ldc : i*ldc+dpNR]
		for j, v := range t[i*dpNR : (i+1)*dpNR] {
			if acc {
				row[j] += v
			} else {
				row[j] = v
			}
		}
	}
}
