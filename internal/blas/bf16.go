package blas

import (
	"fmt"
	"math"
	"sync"
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
//     to float32 as they are loaded (gemvBF16AVX512 where AVX-512 runs,
//     dot4BF16AVX2 where AVX2 does, else Go in four chains; exact widening
//     and float32 sums, never a bfloat16 rounding of x), so a token reads
//     the weight's 2 bytes per element once;
//   - both operands bfloat16 where AVX512_BF16 runs: A and B packed in
//     pairs of depths and multiplied by VDPBF16PS (dpbf16Kernel12x32),
//     twice the multiply-adds of a float32 FMA per instruction; or, where
//     WICK_CPU=amx runs the AMX tiles, by TDPBF16PS on 32×32 blocks of C
//     (gemmAMX, amx.go);
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
// stride LD (transposed when Trans: op(M) = Mᵀ). With Round, F's elements
// are rounded to bfloat16 as they are read (to nearest, ties to even, a
// NaN to 0xFFFF: tensor's cast): the product is then that of the rounded
// copy, bit for bit, without the copy (autocast's float32 operands).
type Mat16 struct {
	F     []float32
	H     []uint16
	LD    int
	Trans bool
	Round bool
}

// is16 reports whether o's values are bfloat16s: H, or F rounded.
func (o Mat16) is16() bool { return o.H != nil || o.Round }

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
	if o.Round {
		return bf16(rne16(o.F[i*o.LD+j]))
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
	if o.Round && o.F == nil {
		panic(fmt.Sprintf("blas: GemmBF16: %s has Round set without F", name))
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
// of them bfloat16 (H, or F with Round), with float32 accumulation into
// the float32 C (row stride ldc); threads bounds the goroutines used (≤ 0:
// all of the pool's). With both operands float32 (no Round) it is Sgemm.
// An operand with Round gives the result of its rounded copy in H, bit
// for bit.
//
// GemmBF16 panics if a size is negative, an operand has both or neither
// of F and H (or Round without F), or a matrix does not fit its slice.
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
	if !a.is16() && !b.is16() {
		Sgemm(a.Trans, b.Trans, m, n, k, a.F, a.LD, b.F, b.LD, c, ldc, false, threads)
		return
	}
	if threads <= 0 {
		threads = parallel.Workers()
	}
	gemv := m <= gemvMaxRows && b.is16() && b.Trans
	if gemv && n*k < gemvMinParallel || !gemv && 2*float64(m)*float64(n)*float64(k) < minParallelFlops {
		threads = 1 // a few rows' products are bound by the weight's reads, not flops (see gemvMinParallel)
	}
	switch {
	case gemv:
		if b.Round {
			// the dot products read the weight's bfloat16 rows: round them
			// (a float32 weight under autocast at generation)
			hb := getHalves(n * k)
			defer halfBufs.Put(hb)
			h := *hb
			for j := range n {
				round16(h[j*k:(j+1)*k], b.F[j*b.LD:][:k])
			}
			b = Mat16{H: h, LD: k, Trans: true}
		}
		gemvBF16(m, n, k, a, b, c, ldc, threads)
	case a.is16() && b.is16() && amxAsm && m > gemvMaxRows:
		gemmAMX(m, n, k, a, b, c, ldc, threads)
	case a.is16() && b.is16() && dpbf16Asm && m > gemvMaxRows:
		gemmDPBF16(m, n, k, a, b, c, ldc, threads)
	default:
		gemmWiden(m, n, k, a, b, c, ldc, threads)
	}
}

// halfBufs recycles bfloat16 scratch.
var halfBufs sync.Pool

// getHalves returns a buffer of n bfloat16s from halfBufs.
func getHalves(n int) *[]uint16 {
	if p, ok := halfBufs.Get().(*[]uint16); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]uint16, n)
	return &s
}

// widenDepth and widenCols are the depths and the columns of op(B) of the
// blocks that gemmWiden widens at a time: a block of a bfloat16 B is then
// at most 512 KiB of float32, which stays in L2 while Sgemm packs it.
const (
	widenDepth = 256
	widenCols  = 512
	// widenParallel is the fewest elements of a block that blockOf widens
	// on more than one thread.
	widenParallel = 32 << 10
)

// gemmWiden computes C = op(A)·op(B) in blocks of widenDepth depths and,
// where B is bfloat16, widenCols columns: the bfloat16 operands' blocks
// widened to float32, each block's product added into C by Sgemm. A
// float32 operand is read in place.
func gemmWiden(m, n, k int, a, b Mat16, c []float32, ldc int, threads int) {
	var abuf, bbuf *[]float32
	if a.is16() {
		abuf = getBuf(&aBufs, m*min(k, widenDepth))
		defer aBufs.Put(abuf)
	}
	nb := n
	if b.is16() {
		nb = min(n, widenCols)
		bbuf = getBuf(&bBufs, min(k, widenDepth)*nb)
		defer bBufs.Put(bbuf)
	}
	for p0 := 0; p0 < k; p0 += widenDepth {
		kb := min(widenDepth, k-p0)
		ta, as, lda := blockOf(a, abuf, p0, kb, 0, m, true, threads)
		for j0 := 0; j0 < n; j0 += nb {
			cols := min(nb, n-j0)
			tb, bs, ldb := blockOf(b, bbuf, p0, kb, j0, cols, false, threads)
			Sgemm(ta, tb, m, cols, kb, as, lda, bs, ldb, c[j0:], ldc, p0 > 0, threads)
		}
	}
}

// blockOf returns depths [p0, p0+kb) and rows [r0, r0+rows) of the other
// dim (op(A)'s rows, op(B)'s columns) of an operand as Sgemm takes it:
// float32 in place, or bfloat16 widened into buf in the orientation it is
// stored in (so that the widening reads rows, and Sgemm sees a transposed
// B as transposed: its dot products for few-row products apply).
// With threads > 1 a large block is widened on the pool, a range of its
// rows (or depths) each: the prompt's pass of a bfloat16 model widens
// every weight once, which on one thread alone held back the products
// that follow on all of them.
func blockOf(o Mat16, buf *[]float32, p0, kb, r0, rows int, left bool, threads int) (trans bool, s []float32, ld int) {
	// the block's stored lines, each of width elements, the first at
	// first in o and the next ones o.LD further each: a line per row when
	// the block is stored depth-minor (op(A) stored m×k, op(B) stored
	// n×k), else a line per depth
	lines, width, first := rows, kb, r0*o.LD+p0
	if left == o.Trans {
		lines, width, first = kb, rows, p0*o.LD+r0
	}
	if o.F != nil && !o.Round {
		return o.Trans, o.F[first:], o.LD
	}
	d := (*buf)[:rows*kb]
	widen := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o.widenTo(d[i*width:(i+1)*width], first+i*o.LD)
		}
	}
	if threads > 1 && rows*kb >= widenParallel {
		parallel.For(lines, max(1, widenParallel/2/width), widen)
	} else {
		widen(0, lines)
	}
	return o.Trans, d, width
}

// widenTo writes the float32 values of o's elements off … off+len(dst)−1
// (as stored) into dst: H widened, or F rounded to bfloat16 and widened.
func (o Mat16) widenTo(dst []float32, off int) {
	if o.H != nil {
		widen16(dst, o.H[off:])
		return
	}
	roundWiden(dst, o.F[off:])
}

// WidenBF16 writes the float32 value of each bfloat16 bit pattern of src
// into dst (exact: NaN payloads, ±0, subnormals and ±Inf kept), with the
// vector kernels where they run. It panics if src is shorter than dst.
func WidenBF16(dst []float32, src []uint16) { widen16(dst, src) }

// widen16 writes the float32 values of the bfloat16 patterns src into dst:
// widen16AVX512 or widen16AVX2 on the first multiple of their step, then
// Go.
func widen16(dst []float32, src []uint16) {
	src = src[:len(dst)]
	n := 0
	switch {
	case widenAsm512 && len(dst) >= 64:
		n = len(dst) &^ 63
		widen16AVX512(&dst[0], &src[0], n)
	case widenAsm2 && len(dst) >= 32:
		n = len(dst) &^ 31
		widen16AVX2(&dst[0], &src[0], n)
	}
	widen16Go(dst[n:], src[n:])
}

// widen16Go is widen16 in Go.
func widen16Go(dst []float32, src []uint16) {
	src = src[:len(dst)]
	for i, h := range src {
		dst[i] = math.Float32frombits(uint32(h) << 16)
	}
}

// gemvBF16 computes C = op(A)·Bᵀ for a few rows of A (m ≤ gemvMaxRows) and
// B stored n×k in bfloat16: op(A)'s rows as float32 (widened once if
// bfloat16), split into their even and odd elements for dot4BF16AVX2 (or
// gemvBF16AVX512 on AVX-512, see gemvWideBF16, which takes B's rows one
// at a time), then dot products with B's rows four at a time, B's rows
// split over at most threads goroutines in multiples of four.
func gemvBF16(m, n, k int, a, b Mat16, c []float32, ldc int, threads int) {
	h := k / 16 * 8 // even (and odd) elements the kernel takes
	buf := getBuf(&gemvBufs, m*k+2*m*h)
	defer gemvBufs.Put(buf)
	x, xeo := (*buf)[:m*k], (*buf)[m*k:]
	for i := range m {
		row := x[i*k : (i+1)*k]
		switch {
		case a.F != nil && !a.Round && !a.Trans:
			copy(row, a.F[i*a.LD:i*a.LD+k])
		case a.is16() && !a.Trans:
			a.widenTo(row, i*a.LD)
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

// The bits of dpbf16Kernel12x32's acc: add the tile to C (else store it),
// and prefetch C's tile first. dpPrefetchPairs is the fewest pairs of
// depths a tile prefetches at: at GPT-2's shapes (768 depths and more, C
// of 3–12 MB) the prefetch made the products 1.03–1.07× faster on Zen 4,
// the tile's C otherwise missing at its end; in shorter tiles (the
// recipe's 128 depths) it cost more than it hid.
const (
	dpAdd           = 1
	dpPrefetch      = 2
	dpPrefetchPairs = 128
)

// gemmDPBF16 computes C = op(A)·op(B) for bfloat16 A and B (H, or F
// rounded) with the AVX512_BF16 micro-kernel. Per depth block: all of
// op(A) packed in row panels of 12 (packA16; a bfloat16 A stored m×k with
// an even depth block read in place instead), then per column block of B
// its panels of 32 columns packed (packB16) and the row panels, split over
// at most threads goroutines, multiplied by each of them: whole tiles
// straight into C (stored for the first depth block, added to after),
// edge tiles through a scratch tile. Each element of A and B is thus
// packed (and rounded) once per product.
func gemmDPBF16(m, n, k int, a, b Mat16, c []float32, ldc int, threads int) {
	panels, rowPanels := ceilDiv(n, dpNR), ceilDiv(m, dpMR)
	kpMax := (min(k, 2*dpPairs) + 1) / 2
	l2 := dpBlockBytes
	if cpu.L2 > 0 {
		l2 = cpu.L2 / 2
	}
	nc := max(1, min(panels, l2/(kpMax*dpNR*4))) // panels per column block
	na, nbw := rowPanels*kpMax*dpMR, nc*kpMax*dpNR
	nsc := 0
	if b.Trans && b.F != nil {
		nsc = nbw // the rounded rows of Bᵀ's panels: 32 rows of 2·kp halves each
	}
	buf := getWords(na + nbw + nsc)
	defer dpBufs.Put(buf)
	j := dpJob{m: m, n: n, a: a, b: b, c: c, ldc: ldc,
		ap: (*buf)[:na], bp: (*buf)[na : na+nbw], sc: (*buf)[na+nbw:]}
	g := rowPanels
	if threads > 1 {
		g = max(1, grain(rowPanels, threads))
	}
	for p0 := 0; p0 < k; p0 += 2 * dpPairs {
		j.p0, j.kb = p0, min(2*dpPairs, k-p0)
		j.kp = (j.kb + 1) / 2
		j.acc = 0
		if p0 > 0 {
			j.acc = dpAdd
		}
		if j.kp >= dpPrefetchPairs {
			j.acc |= dpPrefetch
		}
		j.inPlace = a.H != nil && !a.Trans && j.kb%2 == 0 // full panels of A read where they are
		j.rs, j.gs = 4, 4*dpMR
		if !a.Trans {
			j.rs, j.gs = 4*j.kp, 4
		}
		depthBlock(&j, rowPanels, panels, nc, g, threads)
	}
}

// packedProduct is one depth block of a product of packed operands
// (gemmDPBF16's, gemmAMX's): A's row panels packed, then per column block
// of B's panels (cols) those packed and every row panel multiplied by them.
type packedProduct interface {
	packA(lo, hi int)
	cols(jb, np int)
	packB(lo, hi int)
	mul(lo, hi int)
}

// depthBlock runs p over rowPanels row panels and panels of B in column
// blocks of nc, the row panels split into grains of g (and the column
// block's panels into their own) over at most threads goroutines.
func depthBlock(p packedProduct, rowPanels, panels, nc, g, threads int) {
	if threads <= 1 {
		p.packA(0, rowPanels)
	} else {
		parallel.For(rowPanels, g, p.packA)
	}
	for jb := 0; jb < panels; jb += nc {
		np := min(nc, panels-jb)
		p.cols(jb, np)
		if threads <= 1 {
			p.packB(0, np)
			p.mul(0, rowPanels)
			continue
		}
		parallel.For(np, max(1, grain(np, threads)), p.packB)
		parallel.For(rowPanels, g, p.mul)
	}
}

// dpJob is one gemmDPBF16: its operands, its packed panels and the depth
// block and column block being multiplied.
type dpJob struct {
	m, n       int
	a, b       Mat16
	c          []float32
	ldc        int
	ap, bp, sc []uint32
	p0, kb, kp int // the depth block: depths [p0, p0+kb), kp pairs
	acc        int // dpbf16Kernel12x32's acc: whether the block adds to C, and prefetches it
	inPlace    bool
	rs, gs     int // the kernel's strides of a packed A panel
	jb, np     int // the column block: panels [jb, jb+np)
}

// cols sets the column block: panels [jb, jb+np) of B.
func (j *dpJob) cols(jb, np int) { j.jb, j.np = jb, np }

// packA packs A's row panels [lo, hi) of the depth block (those that are
// not read in place).
func (j *dpJob) packA(lo, hi int) {
	for ip := lo; ip < hi; ip++ {
		if rows := min(dpMR, j.m-ip*dpMR); !j.inPlace || rows < dpMR {
			packA16(j.a, ip*dpMR, rows, j.p0, j.kb, j.ap[ip*j.kp*dpMR:][:j.kp*dpMR])
		}
	}
}

// packB packs panels [lo, hi) of the column block.
func (j *dpJob) packB(lo, hi int) {
	kp := j.kp
	for q := lo; q < hi; q++ {
		j0 := (j.jb + q) * dpNR
		var s []uint16
		if len(j.sc) > 0 {
			s = unsafe.Slice((*uint16)(unsafe.Pointer(&j.sc[q*kp*dpNR])), 2*kp*dpNR)
		}
		packB16(j.b, j.p0, j.kb, j0, min(dpNR, j.n-j0), j.bp[q*kp*dpNR:][:kp*dpNR], s)
	}
}

// mul multiplies row panels [lo, hi) by the column block's panels.
func (j *dpJob) mul(lo, hi int) {
	var tile [dpMR * dpNR]float32
	kp, c, ldc := j.kp, j.c, j.ldc
	for ip := lo; ip < hi; ip++ {
		i0 := ip * dpMR
		rows := min(dpMR, j.m-i0)
		apan, rs, gs := (*uint16)(unsafe.Pointer(&j.ap[ip*kp*dpMR])), j.rs, j.gs
		if j.inPlace && rows == dpMR {
			apan, rs, gs = &j.a.H[i0*j.a.LD+j.p0], 2*j.a.LD, 4
		}
		for q := range j.np {
			j0 := (j.jb + q) * dpNR
			cols := min(dpNR, j.n-j0)
			bpan := &j.bp[q*kp*dpNR]
			if rows == dpMR && cols == dpNR {
				dpbf16Kernel12x32(kp, apan, rs, gs, bpan, &c[i0*ldc+j0], ldc, j.acc)
				continue
			}
			dpbf16Kernel12x32(kp, apan, rs, gs, bpan, &tile[0], dpNR, 0)
			storeEdge(c[i0*ldc+j0:], ldc, tile[:], rows, cols, j.acc&dpAdd)
		}
	}
}

// storeEdge writes (acc = 0) or adds (acc ≠ 0) the rows × cols corner of
// the scratch tile (rows dpNR apart) to C from c on (rows ldc apart): an
// edge tile of gemmDPBF16 or gemmAMX, which their kernels multiply into
// scratch.
func storeEdge(c []float32, ldc int, tile []float32, rows, cols, acc int) {
	for i := range rows {
		crow := c[i*ldc : i*ldc+cols]
		trow := tile[i*dpNR : i*dpNR+cols]
		if acc == 0 {
			copy(crow, trow)
		} else {
			for x, v := range trow {
				crow[x] += v
			}
		}
	}
}

// dpbf16Go is dpbf16Kernel12x32's Go twin (row i's word of pair q of A
// at byte a + q·gs + i·rs, rows of c ldc apart, added to if acc): each
// lane adds the high pair's product, then the low pair's, to its float32
// sum, as VDPBF16PS does (but without its flushing of subnormals), and the
// tile's sum to C at the end.
func dpbf16Go(kp int, a *uint16, rs, gs int, b []uint32, c []float32, ldc int, acc bool) {
	var t [dpMR * dpNR]float32
	for q := range kp {
		for i := range dpMR {
			p := unsafe.Add(unsafe.Pointer(a), q*gs+i*rs)
			alo, ahi := bf16(*(*uint16)(p)), bf16(*(*uint16)(unsafe.Add(p, 2)))
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
