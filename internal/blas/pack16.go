package blas

import (
	"math"
	"math/bits"
	"sync"
	"unsafe"
)

// The packing of gemmDPBF16's operands: pairs of depths into the words
// that VDPBF16PS multiplies (a word's low half the even depth), float32
// operands (Mat16.Round) rounded to bfloat16 in the same pass, so that a
// product of rounded float32 operands needs neither a rounding pass of its
// own nor a bfloat16 copy of them. Per operand layout:
//
//   - op(A) stored m×k (a row's depths adjacent): rows of pairs, 12 rows of
//     kp words (the kernel reads row i's pair q at i·rs + q·4, rs = 4·kp),
//     a row copied or rounded in one pass (round16); a bfloat16 A of an
//     even depth block is read in place (rs = its row's bytes), not packed;
//   - op(A) stored k×m (Aᵀ, a gradient's transpose): groups of 12 words,
//     one per pair (i·4 + q·48), two stored rows interleaved
//     (interleave16);
//   - op(B) stored k×n: groups of 32 words, two stored rows interleaved;
//   - op(B) stored n×k (Bᵀ, a weight): groups of 32 words gathered from the
//     32 rows (gatherPairs), float32 rows rounded into a scratch panel
//     first.
//
// The AVX-512 kernels of pack16_amd64.s do these where AVX-512 runs, Go
// loops (their twins) elsewhere; both round as rne16.

// rne16 rounds v to bfloat16 as tensor's cast does: to nearest, ties to
// even, a NaN to 0xFFFF.
func rne16(v float32) uint16 {
	b := math.Float32bits(v)
	if b&0x7FFFFFFF > 0x7F800000 {
		return 0xFFFF
	}
	return uint16((b + 0x7FFF + (b>>16)&1) >> 16)
}

// round16 writes rne16 of each element of src into dst (of src's length),
// 16 at a time where AVX-512 runs: the packing's rounding of float32
// operands (tensor's own passes use internal/kernels' RoundBF16Bits, the
// same rounding).
func round16(dst []uint16, src []float32) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)]
	if pack16Asm {
		round16AVX512(&dst[0], 0, &src[0], 0, 1, len(src))
		return
	}
	for i, v := range src {
		dst[i] = rne16(v)
	}
}

// round16Rows writes rne16 of rows × n elements of src (rows sld apart,
// from element 0) into dst (rows dld apart).
func round16Rows(dst []uint16, dld int, src []float32, sld, rows, n int) {
	if rows == 0 || n == 0 {
		return
	}
	_, _ = dst[(rows-1)*dld+n-1], src[(rows-1)*sld+n-1]
	if pack16Asm {
		round16AVX512(&dst[0], 2*dld, &src[0], 4*sld, rows, n)
		return
	}
	for r := range rows {
		d, s := dst[r*dld:r*dld+n], src[r*sld:r*sld+n]
		for i, v := range s {
			d[i] = rne16(v)
		}
	}
}

// roundWiden writes the float32 values of rne16 of each element of src
// into dst (of src's length): the widening of a rounded operand.
func roundWiden(dst, src []float32) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = math.Float32frombits(uint32(rne16(v)) << 16)
	}
}

// laneMask returns the mask of lanes 0 … n−1 (n ≤ 32).
func laneMask(n int) uint32 { return uint32(uint64(1)<<n - 1) }

// interleave16 writes kp groups of words gs bytes apart into dst: word j
// (lanes set in store; j < lanes valid, the others 0) of group q is the
// pair of stored rows 2q and 2q+1 of o from element off on (rows o.LD
// apart), rounded if o is float32.
func interleave16(o Mat16, off, kp, lanes int, dst []uint32, gs int, store uint32) {
	if kp == 0 {
		return
	}
	last := off + (2*kp-1)*o.LD + lanes - 1 // the last element read
	_ = dst[(kp-1)*gs/4+31-bits.LeadingZeros32(store)]
	lm := laneMask(lanes)
	if o.H != nil {
		_ = o.H[last]
		if pack16Asm {
			interleaveH16AVX512(&dst[0], gs, &o.H[off], 2*o.LD, kp, lm, store)
		} else {
			interleaveH16Go(&dst[0], gs, &o.H[off], 2*o.LD, kp, lm, store)
		}
		return
	}
	_ = o.F[last]
	if pack16Asm {
		interleaveF16AVX512(&dst[0], gs, &o.F[off], 4*o.LD, kp, lm, store)
	} else {
		interleaveF16Go(&dst[0], gs, &o.F[off], 4*o.LD, kp, lm, store)
	}
}

// gatherPairs writes kp groups of 32 words into dst (128 bytes apart):
// word j of group q is pair q of row j of h (rows ld elements apart, from
// element off on) for j < lanes, 0 for the others.
func gatherPairs(h []uint16, off, ld, kp, lanes int, dst []uint32) {
	if kp == 0 {
		return
	}
	_ = h[off+(lanes-1)*ld+2*kp-1]
	_ = dst[kp*dpNR-1]
	if pack16Asm && lanes == dpNR && kp >= 16 {
		// whole blocks of 16 pairs of all 32 rows: transposed in registers
		// (a gather of one word from each of 16 rows took about 10% of a
		// product x·Wᵀ at GPT-2's shapes)
		blocks := kp / 16
		transposePairsAVX512(&dst[0], 4*dpNR, &h[off], 2*ld, blocks)
		done := 16 * blocks
		if done == kp {
			return
		}
		off, kp, dst = off+2*done, kp-done, dst[done*dpNR:]
	}
	var offs [32]int32
	for j := range lanes {
		offs[j] = int32(2 * j * ld)
	}
	if pack16Asm {
		gatherPairsAVX512(&dst[0], 4*dpNR, &h[off], &offs, kp, laneMask(lanes), laneMask(dpNR))
		return
	}
	gatherPairsGo(&dst[0], 4*dpNR, &h[off], &offs, kp, laneMask(lanes), laneMask(dpNR))
}

// maxGatherLD is the longest row (in bfloat16 elements) that gatherPairs
// takes: 32 rows' byte offsets fit an int32.
const maxGatherLD = (1 << 31) / (2 * dpNR)

// packA16 writes rows [i0, i0+rows) and depths [p0, p0+kb) of op(A) into
// dst ((kb+1)/2 · 12 words) and returns the kernel's strides of the
// panel, rows past the edge and the last pair's missing depth zero: rows
// of pairs where A is stored m×k, groups of pairs where it is transposed.
func packA16(a Mat16, i0, rows, p0, kb int, dst []uint32) (rs, gs int) {
	kp := (kb + 1) / 2
	if !a.Trans {
		h := unsafe.Slice((*uint16)(unsafe.Pointer(&dst[0])), 2*kp*dpMR)
		if a.H != nil {
			for i := range rows {
				copy(h[2*i*kp:][:kb], a.H[(i0+i)*a.LD+p0:][:kb])
			}
		} else {
			round16Rows(h, 2*kp, a.F[i0*a.LD+p0:], a.LD, rows, kb)
		}
		if kb%2 != 0 {
			for i := range rows {
				h[2*i*kp+kb] = 0
			}
		}
		clear(dst[rows*kp : dpMR*kp])
		return 4 * kp, 4
	}
	full := kb / 2
	interleave16(a, p0*a.LD+i0, full, rows, dst, 4*dpMR, laneMask(dpMR))
	if kb%2 != 0 {
		g := dst[full*dpMR : (full+1)*dpMR]
		for i := range g {
			g[i] = 0
			if i < rows {
				g[i] = uint32(a.h16(i0+i, p0+kb-1))
			}
		}
	}
	return 4, 4 * dpMR
}

// packB16 writes depths [p0, p0+kb) and columns [j0, j0+cols) of op(B)
// into dst as (kb+1)/2 groups of 32 words, columns past the edge and the
// last pair's missing depth zero; scratch (32·2·((kb+1)/2) elements) holds
// the rounded rows of a transposed float32 B.
func packB16(b Mat16, p0, kb, j0, cols int, dst []uint32, scratch []uint16) {
	kp, full := (kb+1)/2, kb/2
	switch {
	case !b.Trans:
		interleave16(b, p0*b.LD+j0, full, cols, dst, 4*dpNR, laneMask(dpNR))
	case b.H != nil && b.LD <= maxGatherLD:
		gatherPairs(b.H, j0*b.LD+p0, b.LD, full, cols, dst)
	case b.H != nil:
		for q := range full {
			g := dst[q*dpNR : (q+1)*dpNR]
			for j := range g {
				g[j] = 0
				if j < cols {
					g[j] = pair16(b.H[(j0+j)*b.LD+p0+2*q], b.H[(j0+j)*b.LD+p0+2*q+1])
				}
			}
		}
	default:
		// rows of Bᵀ rounded into scratch (2·kp apart, the odd depth's
		// partner 0), then gathered like a bfloat16 Bᵀ's
		w := 2 * kp
		round16Rows(scratch, w, b.F[j0*b.LD+p0:], b.LD, cols, kb)
		if kb%2 != 0 {
			for j := range cols {
				scratch[j*w+kb] = 0
			}
		}
		gatherPairs(scratch, 0, w, kp, cols, dst)
		return
	}
	if kb%2 != 0 {
		g := dst[full*dpNR : (full+1)*dpNR]
		for j := range g {
			g[j] = 0
			if j < cols {
				g[j] = uint32(b.h16(p0+kb-1, j0+j))
			}
		}
	}
}

// h16 returns element (i, j) of op(M) as bfloat16: H's bits, or F's
// value rounded by rne16.
func (o Mat16) h16(i, j int) uint16 {
	if o.Trans {
		i, j = j, i
	}
	if o.H != nil {
		return o.H[i*o.LD+j]
	}
	return rne16(o.F[i*o.LD+j])
}

// pair16 is the word of two bfloat16 values that VDPBF16PS multiplies as a
// pair: lo (the even depth) in the low half.
func pair16(lo, hi uint16) uint32 { return uint32(lo) | uint32(hi)<<16 }

// dpBufs recycles gemmDPBF16's packed panels.
var dpBufs sync.Pool

// getWords returns a buffer of n words from dpBufs.
func getWords(n int) *[]uint32 {
	if p, ok := dpBufs.Get().(*[]uint32); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]uint32, n)
	return &s
}

// The Go twins of pack16_amd64.s's kernels (the same arguments).

func round16Go(dst *uint16, dld int, src *float32, sld, rows, n int) {
	for r := range rows {
		d := unsafe.Slice((*uint16)(unsafe.Add(unsafe.Pointer(dst), r*dld)), n)
		s := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(src), r*sld)), n)
		for i, v := range s {
			d[i] = rne16(v)
		}
	}
}

func interleaveF16Go(dst *uint32, gs int, src *float32, ld, kp int, lanes, store uint32) {
	for q := range kp {
		d := unsafe.Slice((*uint32)(unsafe.Add(unsafe.Pointer(dst), q*gs)), 32-bits.LeadingZeros32(store))
		r0 := unsafe.Add(unsafe.Pointer(src), 2*q*ld)
		for j := range d {
			if store>>j&1 == 0 {
				continue
			}
			var w uint32
			if lanes>>j&1 != 0 {
				w = pair16(rne16(*(*float32)(unsafe.Add(r0, 4*j))), rne16(*(*float32)(unsafe.Add(r0, ld+4*j))))
			}
			d[j] = w
		}
	}
}

func interleaveH16Go(dst *uint32, gs int, src *uint16, ld, kp int, lanes, store uint32) {
	for q := range kp {
		d := unsafe.Slice((*uint32)(unsafe.Add(unsafe.Pointer(dst), q*gs)), 32-bits.LeadingZeros32(store))
		r0 := unsafe.Add(unsafe.Pointer(src), 2*q*ld)
		for j := range d {
			if store>>j&1 == 0 {
				continue
			}
			var w uint32
			if lanes>>j&1 != 0 {
				w = pair16(*(*uint16)(unsafe.Add(r0, 2*j)), *(*uint16)(unsafe.Add(r0, ld+2*j)))
			}
			d[j] = w
		}
	}
}

func gatherPairsGo(dst *uint32, gs int, src *uint16, off *[32]int32, kp int, lanes, store uint32) {
	for q := range kp {
		d := unsafe.Slice((*uint32)(unsafe.Add(unsafe.Pointer(dst), q*gs)), 32-bits.LeadingZeros32(store))
		for j := range d {
			if store>>j&1 == 0 {
				continue
			}
			var w uint32
			if lanes>>j&1 != 0 {
				p := unsafe.Add(unsafe.Pointer(src), int(off[j])+4*q)
				w = pair16(*(*uint16)(p), *(*uint16)(unsafe.Add(p, 2)))
			}
			d[j] = w
		}
	}
}

func transposePairsGo(dst *uint32, gs int, src *uint16, ld, blocks int) {
	for q := range 16 * blocks {
		d := unsafe.Slice((*uint32)(unsafe.Add(unsafe.Pointer(dst), q*gs)), dpNR)
		for j := range d {
			d[j] = *(*uint32)(unsafe.Add(unsafe.Pointer(src), j*ld+4*q))
		}
	}
}
