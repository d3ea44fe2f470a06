//go:build amd64 && !purego

package blas

import "github.com/wickml/wick/internal/cpu"

// gemv1AVX512 writes to out[r] the dot products of the 16·k16 floats at x
// with the rows r < rows at w (ldw floats apart), each with dot4x1AVX512's
// bits, reading the rows in address order (rows, k16 ≥ 1).
//
//go:noescape
func gemv1AVX512(rows, k16 int, x, w *float32, ldw int, out *float32)

// gemv2AVX512 writes to out[r] and out[r+off] gemv1AVX512's sums of the
// rows r and r+off for r < pairs, the two read side by side: two streams
// of w in address order (pairs, k16 ≥ 1, off ≥ pairs).
//
//go:noescape
func gemv2AVX512(pairs, k16 int, x, w *float32, ldw, off int, out *float32)

// gemvBF16AVX512 writes to c[r] the dot products of x's first 32·k32
// elements, given as its even (xe) and odd (xo) elements, with the
// bfloat16 rows r < rows of w (ldw elements apart), widening w exactly to
// float32 as it is loaded, each row with gemv1AVX512's sums; it reads the
// rows in address order and prefetches pf bytes ahead of every line (rows,
// k32 ≥ 1).
//
//go:noescape
func gemvBF16AVX512(rows, k32 int, xe, xo *float32, w *uint16, ldw, pf int, c *float32)

// gemvBF16Asm says whether gemvBF16AVX512 runs; tests switch it off.
var gemvBF16Asm = cpu.HasAVX512
