package blas

import (
	"unsafe"

	"github.com/wickml/wick/internal/cpu"
)

// The AMX path of GemmBF16 (opt-in, WICK_CPU=amx: see package cpu): both
// operands bfloat16 (H, or F rounded as it is packed), multiplied by
// TDPBF16PS on 32×32 blocks of C held in four 16×16 float32 tiles.
//
// Layouts, per depth block of up to 2·amxPairs depths padded to whole
// tiles' depths (16 pairs, zeros past the end; zero pairs add nothing):
//
//   - A: blocks of 32 rows (zeros past m), each row kp words (pairs of
//     depths, the even depth in the low half), rows 4·kp bytes apart: a
//     16-row A tile is 16 pairs of 16 rows. An A stored m×k is copied or
//     rounded row by row; a transposed one (a weight gradient's dYᵀ·X) is
//     interleaved into groups of 32 words, one per row (as the VDPBF16PS
//     path packs it), then transposed into rows;
//   - B: packB16's panels of 32 columns (kp groups of 32 words, 128 bytes
//     apart): a 16-column B tile is 16 groups' halves, rows 128 bytes
//     apart, as TDPBF16PS takes B (a row per pair, a word per column).
const (
	amxMR    = 32
	amxPairs = 384
)

// amxConfig is the tile configuration LDTILECFG loads: palette 1, all
// eight tiles 16 rows of 64 bytes (tmm0–3 C, tmm4–5 A's two row halves,
// tmm6–7 B's two column halves).
var amxConfig = func() (c [64]byte) {
	c[0] = 1
	for t := range 8 {
		c[16+2*t] = 64
		c[48+t] = 16
	}
	return c
}()

// amxTileGo is amxKernel32x32's Go twin: the 32×32 float32 block of C at c
// (rows ldc elements apart; added to when acc ≠ 0, else overwritten) plus
// A·B over 16·kq pairs of depths, row i's pair q of A the word at byte
// a + i·rs + 4·q and B packed in groups of 32 words. Each lane adds the
// even depth's product, then the odd one's, as TDPBF16PS's definition
// does (the hardware flushes subnormals, which this twin does not).
func amxTileGo(kq int, a *uint16, rs int, b *uint32, c *float32, ldc, acc int, _ *[64]byte) {
	kp := 16 * kq
	bs := unsafe.Slice(b, kp*dpNR)
	for i := range amxMR {
		row := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(c), 4*i*ldc)), dpNR)
		ar := unsafe.Slice((*uint32)(unsafe.Add(unsafe.Pointer(a), i*rs)), kp)
		for j := range row {
			var s float32
			if acc != 0 {
				s = row[j]
			}
			for q, w := range ar {
				v := bs[q*dpNR+j]
				s += bf16(uint16(w)) * bf16(uint16(v))
				s += bf16(uint16(w>>16)) * bf16(uint16(v>>16))
			}
			row[j] = s
		}
	}
}

// roundUp16 rounds n up to a multiple of 16.
func roundUp16(n int) int { return (n + 15) &^ 15 }

// gemmAMX computes C = op(A)·op(B) for bfloat16 A and B (H, or F rounded)
// with amxTile. Per depth block: A packed in
// blocks of 32 rows, then per column block of B (half of L2, as
// gemmDPBF16's) its panels packed and each row block multiplied by them,
// the row blocks split over at most threads goroutines; whole blocks of C
// straight from the tiles, edge blocks through a scratch block.
func gemmAMX(m, n, k int, a, b Mat16, c []float32, ldc int, threads int) {
	panels, blocks := ceilDiv(n, dpNR), ceilDiv(m, amxMR)
	kpMax := roundUp16((min(k, 2*amxPairs) + 1) / 2)
	l2 := dpBlockBytes
	if cpu.L2 > 0 {
		l2 = cpu.L2 / 2
	}
	nc := max(1, min(panels, l2/(kpMax*dpNR*4)))
	na, nbw := blocks*amxMR*kpMax, nc*kpMax*dpNR
	nsc := 0
	if b.Trans && b.F != nil {
		nsc = nbw
	}
	nt := 0
	if a.Trans {
		nt = na // the interleaved groups of each row block, before their transposition
	}
	buf := getWords(na + nbw + nsc + nt)
	defer dpBufs.Put(buf)
	j := amxJob{m: m, n: n, a: a, b: b, c: c, ldc: ldc,
		ap: (*buf)[:na], bp: (*buf)[na : na+nbw], sc: (*buf)[na+nbw : na+nbw+nsc], at: (*buf)[na+nbw+nsc:]}
	g := blocks
	if threads > 1 {
		g = max(1, grain(blocks, threads))
	}
	for p0 := 0; p0 < k; p0 += 2 * amxPairs {
		j.p0, j.kb = p0, min(2*amxPairs, k-p0)
		j.kp = roundUp16((j.kb + 1) / 2)
		j.acc = 0
		if p0 > 0 {
			j.acc = 1
		}
		depthBlock(&j, blocks, panels, nc, g, threads)
	}
}

// amxJob is one gemmAMX: its operands, its packed blocks and the depth
// block and column block being multiplied.
type amxJob struct {
	m, n       int
	a, b       Mat16
	c          []float32
	ldc        int
	ap, bp, sc []uint32
	at         []uint32 // a transposed A's groups
	p0, kb, kp int      // the depth block: depths [p0, p0+kb), kp pairs padded to whole tiles
	acc        int
	jb, np     int // the column block: panels [jb, jb+np)
}

// cols sets the column block: panels [jb, jb+np) of B.
func (j *amxJob) cols(jb, np int) { j.jb, j.np = jb, np }

// packA packs A's row blocks [lo, hi) of the depth block: rows of kp
// words, the depths past kb and the rows past m zero.
func (j *amxJob) packA(lo, hi int) {
	w := 2 * j.kp // a row's bfloat16 elements
	for r := lo; r < hi; r++ {
		i0 := r * amxMR
		rows := min(amxMR, j.m-i0)
		if j.a.Trans {
			j.packAT(i0, rows)
			continue
		}
		h := unsafe.Slice((*uint16)(unsafe.Pointer(&j.ap[i0*j.kp])), amxMR*w)
		if j.a.H != nil {
			for i := range rows {
				copy(h[i*w:][:j.kb], j.a.H[(i0+i)*j.a.LD+j.p0:][:j.kb])
			}
		} else {
			round16Rows(h, w, j.a.F[i0*j.a.LD+j.p0:], j.a.LD, rows, j.kb)
		}
		for i := range rows {
			clear(h[i*w+j.kb : (i+1)*w])
		}
		clear(h[rows*w:])
	}
}

// packAT packs the row block of a transposed A from row i0 on (rows of
// them in A): its pairs interleaved into groups of 32 words (a group per
// pair, a word per row, rows past m zero; the odd depth's partner zero),
// then each row's words gathered from the groups, zeros up to kp.
func (j *amxJob) packAT(i0, rows int) {
	kr, full := (j.kb+1)/2, j.kb/2
	g := j.at[i0*j.kp:][:kr*amxMR]
	interleave16(j.a, j.p0*j.a.LD+i0, full, rows, g, 4*amxMR, laneMask(amxMR))
	if kr > full {
		last := g[full*amxMR : kr*amxMR]
		for i := range last {
			last[i] = 0
			if i < rows {
				last[i] = uint32(j.a.h16(i0+i, j.p0+j.kb-1))
			}
		}
	}
	for i := range amxMR {
		row := j.ap[(i0+i)*j.kp:][:j.kp]
		for q := range kr {
			row[q] = g[q*amxMR+i]
		}
		clear(row[kr:])
	}
}

// packB packs panels [lo, hi) of the column block as packB16 does, with
// zero groups past the depth block's pairs up to kp.
func (j *amxJob) packB(lo, hi int) {
	kr := (j.kb + 1) / 2 // the pairs packB16 writes
	for q := lo; q < hi; q++ {
		j0 := (j.jb + q) * dpNR
		dst := j.bp[q*j.kp*dpNR:][:j.kp*dpNR]
		var s []uint16
		if len(j.sc) > 0 {
			s = unsafe.Slice((*uint16)(unsafe.Pointer(&j.sc[q*j.kp*dpNR])), 2*kr*dpNR)
		}
		packB16(j.b, j.p0, j.kb, j0, min(dpNR, j.n-j0), dst[:kr*dpNR], s)
		clear(dst[kr*dpNR:])
	}
}

// mul multiplies row blocks [lo, hi) by the column block's panels.
func (j *amxJob) mul(lo, hi int) {
	var tile [amxMR * dpNR]float32
	kq, rs, c, ldc := j.kp/16, 4*j.kp, j.c, j.ldc
	for r := lo; r < hi; r++ {
		i0 := r * amxMR
		rows := min(amxMR, j.m-i0)
		apan := (*uint16)(unsafe.Pointer(&j.ap[i0*j.kp]))
		for q := range j.np {
			j0 := (j.jb + q) * dpNR
			cols := min(dpNR, j.n-j0)
			bpan := &j.bp[q*j.kp*dpNR]
			if rows == amxMR && cols == dpNR {
				amxTile(kq, apan, rs, bpan, &c[i0*ldc+j0], ldc, j.acc, &amxConfig)
				continue
			}
			amxTile(kq, apan, rs, bpan, &tile[0], dpNR, 0, &amxConfig)
			storeEdge(c[i0*ldc+j0:], ldc, tile[:], rows, cols, j.acc)
		}
	}
}
