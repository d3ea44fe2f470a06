//go:build amd64 && !purego

package blas

import (
	"math"
	"testing"

	"github.com/wickml/wick/internal/cpu"
)

// TestGemv2MatchesGemv1 checks gemv2AVX512, the two-stream one-row kernel,
// against gemv1AVX512 bit for bit: each pair of rows r and r+off gets the
// sums gemv1AVX512 gives those rows, over pair counts, depths, padded
// strides and offsets beyond the pairs, and the outputs between the two
// halves are left as they were.
func TestGemv2MatchesGemv1(t *testing.T) {
	if !cpu.HasAVX512 {
		t.Skip("no AVX-512 on this machine")
	}
	r := newRand(t)
	for _, pairs := range []int{1, 2, 3, 64, 128} {
		for _, k16 := range []int{1, 2, 36, 97} {
			for _, gap := range []int{0, 5} {
				off := pairs + gap
				ldw := 16*k16 + r.IntN(20)
				rows := off + pairs
				x, w := randSlice(r, 16*k16), randSlice(r, rows*ldw)
				want := make([]float32, rows)
				gemv1AVX512(rows, k16, &x[0], &w[0], ldw, &want[0])
				got := make([]float32, rows)
				for i := range got {
					got[i] = float32(i) + 0.5 // marks the outputs between the halves
				}
				gemv2AVX512(pairs, k16, &x[0], &w[0], ldw, off, &got[0])
				for i := range rows {
					w := want[i]
					if i >= pairs && i < off {
						w = float32(i) + 0.5
					}
					if math.Float32bits(got[i]) != math.Float32bits(w) {
						t.Fatalf("pairs=%d k16=%d off=%d ldw=%d: out[%d] = %v, want %v", pairs, k16, off, ldw, i, got[i], w)
					}
				}
			}
		}
	}
}
