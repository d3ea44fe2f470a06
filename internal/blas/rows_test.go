package blas

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wickml/wick/internal/approx"
)

// TestSgemmRowsTInvariant checks SgemmRowsT's promise: each row of C has
// the bits of the same row computed alone (m = 1), for every m, thread
// count and path (every assembly path of this machine and the pure-Go
// fallback), and agrees with a float64 product to rounding. On an
// assembly path a row alone is also Sgemm's one-row product, bit for bit.
func TestSgemmRowsTInvariant(t *testing.T) {
	exclusive(t)
	r := newRand(t)
	saved := active
	defer func() { active = saved }()
	paths := append([]*path{nil}, testPaths(t)...)
	for _, p := range paths {
		active = p
		name := "generic"
		if p != nil {
			name = p.name
		}
		for _, sz := range []struct{ n, k int }{{1, 1}, {5, 7}, {9, 15}, {12, 16}, {64, 64}, {67, 130}, {257, 771}, {1031, 96}} {
			for _, m := range []int{1, 2, 4, 5, 6, 7, 9, 13, 33, 70} {
				lda, ldb, ldc := sz.k+r.IntN(3), sz.k+r.IntN(3), sz.n+r.IntN(3)
				a, b := randSlice(r, m*lda), randSlice(r, sz.n*ldb)
				c := make([]float32, m*ldc)
				threads := 1 + r.IntN(3)
				SgemmRowsT(m, sz.n, sz.k, a, lda, b, ldb, c, ldc, threads)
				for i := range m {
					alone := make([]float32, sz.n)
					SgemmRowsT(1, sz.n, sz.k, a[i*lda:], lda, b, ldb, alone, sz.n, 1)
					what := fmt.Sprintf("%s m=%d n=%d k=%d threads=%d row %d", name, m, sz.n, sz.k, threads, i)
					if d := bitDiff(c[i*ldc:i*ldc+sz.n], alone); d >= 0 {
						t.Fatalf("%s: C[%d][%d] = %v among %d rows, %v alone", what, i, d, c[i*ldc+d], m, alone[d])
					}
					if p != nil {
						one := make([]float32, sz.n)
						Sgemm(false, true, 1, sz.n, sz.k, a[i*lda:], lda, b, ldb, one, sz.n, false, 1)
						if d := bitDiff(alone, one); d >= 0 {
							t.Fatalf("%s: C[%d][%d] = %v, Sgemm's one-row product %v", what, i, d, alone[d], one[d])
						}
					}
					for j := range sz.n {
						var want, scale float64
						for q := range sz.k {
							v := float64(a[i*lda+q]) * float64(b[j*ldb+q])
							want += v
							scale += math.Abs(v)
						}
						if !approx.Scalar(float64(c[i*ldc+j]), want, 0, tol(scale)) {
							t.Fatalf("%s: C[%d][%d] = %v, want %v", what, i, j, c[i*ldc+j], want)
						}
					}
				}
			}
		}
	}
}

// BenchmarkSgemmRowsT times the row-invariant products of a serving step
// on the CPU recipe's model (16 rows by a 128-wide layer's weights) on
// one thread.
func BenchmarkSgemmRowsT(b *testing.B) {
	r := newRand(b)
	for _, sz := range []struct{ m, n, k int }{{16, 384, 128}, {16, 512, 128}, {16, 128, 512}, {9, 512, 128}, {1, 512, 128}} {
		b.Run(fmt.Sprintf("%dx%dx%d", sz.m, sz.n, sz.k), func(b *testing.B) {
			a, w, c := randSlice(r, sz.m*sz.k), randSlice(r, sz.n*sz.k), make([]float32, sz.m*sz.n)
			for b.Loop() {
				SgemmRowsT(sz.m, sz.n, sz.k, a, sz.k, w, sz.k, c, sz.n, 1)
			}
			b.ReportMetric(2*float64(sz.m*sz.n*sz.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkSgemmRowsTLayers times the products of a whole serving step on
// one thread: the CPU recipe's four layers (qkv, projection and the two
// MLP products, 3 MB of weights, more than a core's L2) and sixteen such
// layers, for the 8 rows of half a split batch and for 16 rows. Unlike
// BenchmarkSgemmRowsT the weights come from L3 or memory, as in a server.
func BenchmarkSgemmRowsTLayers(b *testing.B) {
	r := newRand(b)
	type layer struct{ qkv, proj, fc, fc2 []float32 }
	for _, layers := range []int{4, 16} {
		ls := make([]layer, layers)
		for i := range ls {
			ls[i] = layer{randSlice(r, 384*128), randSlice(r, 128*128), randSlice(r, 512*128), randSlice(r, 128*512)}
		}
		for _, m := range []int{8, 16} {
			b.Run(fmt.Sprintf("layers=%d/m=%d", layers, m), func(b *testing.B) {
				a, c := randSlice(r, m*512), make([]float32, m*512)
				for b.Loop() {
					for _, l := range ls {
						SgemmRowsT(m, 384, 128, a, 128, l.qkv, 128, c, 384, 1)
						SgemmRowsT(m, 128, 128, a, 128, l.proj, 128, c, 128, 1)
						SgemmRowsT(m, 512, 128, a, 128, l.fc, 128, c, 512, 1)
						SgemmRowsT(m, 128, 512, a, 512, l.fc2, 512, c, 128, 1)
					}
				}
				macs := float64(layers) * float64(m) * (384*128 + 128*128 + 512*128 + 128*512)
				b.ReportMetric(2*macs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// TestRows512Generated checks that rows512_amd64.s is what gen_rows512.go
// writes now: the assembly is never edited by hand.
func TestRows512Generated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator with go run")
	}
	dst := filepath.Join(t.TempDir(), "rows512_amd64.s")
	if out, err := exec.Command("go", "run", "gen_rows512.go", "-o", dst).CombinedOutput(); err != nil {
		t.Fatalf("go run gen_rows512.go: %v\n%s", err, out)
	}
	want, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("rows512_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("rows512_amd64.s differs from what gen_rows512.go writes: run go generate in internal/blas")
	}
}
