//go:build amd64 && !purego

package blas

import "github.com/wickml/wick/internal/cpu"

// The AVX-512 packing of bfloat16 operands (pack16_amd64.s); pack16_other.go
// has their Go twins under the same names for builds without assembly.

// pack16Asm says whether the kernels below run (AVX-512F and BW); tests
// switch it off.
var pack16Asm = cpu.HasAVX512

// round16AVX512 writes the bfloat16 rounding of the float32 src[r·sld + i]
// to dst[r·dld + i] for r < rows and i < n (strides in bytes).
//
//go:noescape
func round16AVX512(dst *uint16, dld int, src *float32, sld, rows, n int)

// interleaveF16AVX512 writes kp groups of words gs bytes apart, each word
// j the rounded float32 rows r0[j] | r1[j]<<16 (rows 2q and 2q+1 of src,
// ld bytes apart) in the lanes set in lanes, 0 in the other lanes set in
// store.
//
//go:noescape
func interleaveF16AVX512(dst *uint32, gs int, src *float32, ld, kp int, lanes, store uint32)

// interleaveH16AVX512 is interleaveF16AVX512 for bfloat16 rows.
//
//go:noescape
func interleaveH16AVX512(dst *uint32, gs int, src *uint16, ld, kp int, lanes, store uint32)

// gatherPairsAVX512 writes kp groups of words gs bytes apart, word j of
// group q the pair of bfloat16 at byte src + off[j] + 4q in the lanes set
// in lanes, 0 in the other lanes set in store.
//
//go:noescape
func gatherPairsAVX512(dst *uint32, gs int, src *uint16, off *[32]int32, kp int, lanes, store uint32)

// transposePairsAVX512 writes 16·blocks groups of 32 words gs bytes apart,
// word j of group q the pair of bfloat16 at byte src + j·ld + 4q: the
// words gatherPairsAVX512 writes with all 32 lanes set, 16 pairs of the
// 32 rows at a time transposed in registers.
//
//go:noescape
func transposePairsAVX512(dst *uint32, gs int, src *uint16, ld, blocks int)
