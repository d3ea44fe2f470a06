//go:build amd64 && !purego

package serve

import (
	"math"
	"slices"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestAttendKernels checks the AVX-512 attention loops: the four-wide
// paths (four positions of dotsAVX512, four and two column blocks of
// axpysAVX512) give the bits of the one-at-a-time paths, and both are
// near a float64 sum, for counts that end on every remainder.
func TestAttendKernels(t *testing.T) {
	if !wideHeads(16) {
		t.Skip("the AVX-512 loops do not run here")
	}
	g := tensor.NewGenerator(3)
	for _, d16 := range []int{1, 2, 3, 4, 5, 7, 8} {
		for _, s := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13} {
			d, ld := 16*d16, 16*d16+32 // rows apart, as heads of a cache row
			q := g.Randn(d).Float32s()
			rows := g.Randn(s * ld).Float32s()
			w := g.Randn(s).Float32s()

			sc := make([]float32, s)
			dotsAVX512(&q[0], &rows[0], ld, s, d16, &sc[0])
			for p := range s {
				var one float32
				dotsAVX512(&q[0], &rows[p*ld], ld, 1, d16, &one)
				if math.Float32bits(one) != math.Float32bits(sc[p]) {
					t.Fatalf("dots, d=%d s=%d: position %d is %v, alone %v", d, s, p, sc[p], one)
				}
				var want float64
				for i := range d {
					want += float64(q[i]) * float64(rows[p*ld+i])
				}
				if math.Abs(float64(sc[p])-want) > 1e-5*float64(d) {
					t.Fatalf("dots, d=%d s=%d: position %d is %v, float64 %v", d, s, p, sc[p], want)
				}
			}

			out := make([]float32, d)
			axpysAVX512(&out[0], &w[0], &rows[0], ld, s, d16)
			alone := make([]float32, d)
			for c := range d16 {
				axpysAVX512(&alone[16*c], &w[0], &rows[16*c], ld, s, 1)
			}
			if !slices.Equal(out, alone) {
				t.Fatalf("axpys, d=%d s=%d: the blocks side by side give other bits than one at a time", d, s)
			}
			for i := range d {
				var want float64
				for p := range s {
					want += float64(w[p]) * float64(rows[p*ld+i])
				}
				if math.Abs(float64(out[i])-want) > 1e-5*float64(s) {
					t.Fatalf("axpys, d=%d s=%d: column %d is %v, float64 %v", d, s, i, out[i], want)
				}
			}
		}
	}
}
