//go:build openblas && cgo

package blas

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wickml/wick/internal/blas/openblas"
)

// BenchmarkSgemmPaired times Wick's Sgemm and OpenBLAS's cblas_sgemm in
// one process, call against call on the same operands, and reports each
// one's median GFLOP/s and the median of the per-pair ratios (Wick's speed
// over OpenBLAS's, above 1 when Wick is faster). The host's speed drifts
// between runs and even within one; two calls milliseconds apart see the
// same host, and no interpreter's per-call overhead is counted. Build with
// -tags openblas (scripts/bench_sgemm_paired.sh does, and sets what
// OpenBLAS needs: see there).
func BenchmarkSgemmPaired(b *testing.B) {
	b.Logf("OpenBLAS kernels: %s; Wick's: %s", openblas.Core(), Kernel())
	for _, s := range benchShapes {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/t%d", s.name, threads), func(b *testing.B) {
				a, lda, bm, ldb, c := s.operands()
				openblas.SetThreads(threads)
				flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
				var wick, peer, ratio []float64
				for b.Loop() {
					t0 := time.Now()
					Sgemm(s.transA, s.transB, s.m, s.n, s.k, a, lda, bm, ldb, c, s.n, false, threads)
					t1 := time.Now()
					openblas.Sgemm(s.transA, s.transB, s.m, s.n, s.k, a, lda, bm, ldb, c, s.n)
					t2 := time.Now()
					w, p := t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds()
					wick = append(wick, flops/w/1e9)
					peer = append(peer, flops/p/1e9)
					ratio = append(ratio, p/w)
				}
				b.ReportMetric(median(wick), "wickGFLOP/s")
				b.ReportMetric(median(peer), "openblasGFLOP/s")
				b.ReportMetric(median(ratio), "ratio")
			})
		}
	}
}

// TestOpenBLASSgemm checks that the openblas package computes the product
// that BenchmarkSgemmPaired times Wick's against (the transposes passed
// the right way round): every benchmark shape in its layout, with padded
// leading dimensions, against the float64 reference.
func TestOpenBLASSgemm(t *testing.T) {
	r := newRand(t)
	for _, s := range benchShapes {
		g := gemmCase{transA: s.transA, transB: s.transB, m: s.m, n: s.n, k: s.k, lda: s.k + 3, ldb: s.n + 1, ldc: s.n + 5}
		if g.transA {
			g.lda = g.m + 2
		}
		if g.transB {
			g.ldb = g.k + 7
		}
		a, b, c := g.operands(r)
		c0 := append([]float32(nil), c...)
		openblas.SetThreads(2)
		openblas.Sgemm(g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, c, g.ldc)
		g.check(t, "openblas.Sgemm", c, c0, a, b)
	}
}

// TestOpenBLASSgemmPanics checks that the wrapper refuses what OpenBLAS
// would read or write past: a short operand, a stride below the width, an
// empty size.
func TestOpenBLASSgemmPanics(t *testing.T) {
	a, b, c := make([]float32, 6), make([]float32, 6), make([]float32, 4)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"short C", func() { openblas.Sgemm(false, false, 2, 2, 3, a, 3, b, 2, c[:3], 2) }},
		{"short A", func() { openblas.Sgemm(false, false, 2, 2, 3, a[:5], 3, b, 2, c, 2) }},
		{"stride of B", func() { openblas.Sgemm(false, true, 2, 2, 3, a, 3, b, 2, c, 2) }},
		{"k = 0", func() { openblas.Sgemm(false, false, 2, 2, 0, a, 3, b, 2, c, 2) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}

// median returns the median of x (the upper one of an even count).
func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}
