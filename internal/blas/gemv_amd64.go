//go:build amd64 && !purego

package blas

import "github.com/wickml/wick/internal/cpu"

// gemv1AVX512 writes to out[4q:4q+4] the dot products of the 16·k16
// floats at x with the four rows of quadruple q of the rows at w (ldw
// floats apart), for q < quads, each quadruple with dot4x1AVX512's bits;
// it prefetches pf bytes ahead of every line of w it reads (quads,
// k16 ≥ 1).
//
//go:noescape
func gemv1AVX512(quads, k16 int, x, w *float32, ldw, pf int, out *float32)

// gemvBF16AVX512 writes to c[r] the dot products of x's first 32·k32
// elements, given as its even (xe) and odd (xo) elements, with the
// bfloat16 rows r < rows of w (ldw elements apart), widening w exactly to
// float32 as it is loaded, each row with the sums of a gemv1AVX512
// quadruple's row; it reads the rows in address order and prefetches pf
// bytes ahead of every line (rows, k32 ≥ 1).
//
//go:noescape
func gemvBF16AVX512(rows, k32 int, xe, xo *float32, w *uint16, ldw, pf int, c *float32)

// gemvBF16Asm says whether gemvBF16AVX512 runs; tests switch it off.
var gemvBF16Asm = cpu.HasAVX512
