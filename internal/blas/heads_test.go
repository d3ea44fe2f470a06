package blas

import (
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/internal/testseed"
)

// TestHeadKernels checks HeadDots and HeadAxpys against the per-head
// Sgemm calls they stand for, bit for bit, on the kernel this build and
// WICK_CPU run: one to twelve heads, depths of whole vectors and not (the
// per-head fallback), a cache row wider than its heads, a single position
// and depths of several of Sgemm's blocks.
func TestHeadKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 17))
	fill := func(n int) []float32 { return randSlice(r, n) }
	for _, heads := range []int{1, 3, 12} {
		for _, d := range []int{16, 64, 80, 6} {
			for _, seq := range []int{1, 5, 63, 300, 700} {
				for _, pad := range []int{0, 8} {
					ld := heads*d + pad
					q, k, v := fill(heads*d), fill(seq*ld), fill(seq*ld)
					ldp := seq + 3
					got, want := fill(heads*ldp), fill(heads*ldp)
					copy(want, got)
					HeadDots(heads, seq, d, q, k, ld, got, ldp)
					for h := range heads {
						Sgemm(false, true, 1, seq, d, q[h*d:], d, k[h*d:], ld, want[h*ldp:], ldp, false, 1)
					}
					if i := bitDiff(got, want); i >= 0 {
						t.Fatalf("HeadDots heads=%d d=%d seq=%d pad=%d: element %d is %v, Sgemm's %v", heads, d, seq, pad, i, got[i], want[i])
					}
					y, wy := fill(heads*d), fill(heads*d)
					HeadAxpys(heads, seq, d, got, ldp, v, ld, y)
					for h := range heads {
						Sgemm(false, false, 1, d, seq, want[h*ldp:], ldp, v[h*d:], ld, wy[h*d:], d, false, 1)
					}
					if i := bitDiff(y, wy); i >= 0 {
						t.Fatalf("HeadAxpys heads=%d d=%d seq=%d pad=%d: element %d is %v, Sgemm's %v", heads, d, seq, pad, i, y[i], wy[i])
					}
				}
			}
		}
	}
}
