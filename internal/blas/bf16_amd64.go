//go:build amd64 && !purego

package blas

import "github.com/wickml/wick/internal/cpu"

// The bfloat16 kernels of bf16_amd64.s (written by
// scripts/gen_bf16_kernel.py); bf16_other.go has their Go twins under the
// same names for builds without assembly.

// dpbf16Asm and dot16Asm say whether the AVX512_BF16 micro-kernel and the
// AVX2 dot kernel of bfloat16 rows run; tests switch them off.
var (
	dpbf16Asm = cpu.HasAVX512BF16
	dot16Asm  = cpu.HasAVX2FMA
)

// dpbf16Kernel12x32 writes (acc&dpAdd = 0) or adds to (acc&dpAdd ≠ 0) the
// 12×32 float32 tile of C at c (rows ldc apart) the product A·B of kp
// pairs of depths, row i's word of pair q of A at byte a + q·gs + i·rs and
// B packed as packB16 leaves it (see bf16_amd64.s); with dpPrefetch set in
// acc it prefetches the tile of C first.
//
//go:noescape
func dpbf16Kernel12x32(kp int, a *uint16, rs, gs int, b *uint32, c *float32, ldc, acc int)

// dot4BF16AVX2 writes to out the dot products of x's first 16·k16
// elements, given as its even (xe) and odd (xo) elements, with the four
// bfloat16 rows of w that start ldw apart (k16 ≥ 1).
//
//go:noescape
func dot4BF16AVX2(k16 int, xe, xo *float32, w *uint16, ldw int, out *[4]float32)
