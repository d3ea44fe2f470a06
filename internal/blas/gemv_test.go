package blas

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/internal/cpu"
)

// TestGemvPaths checks the few-row products x·Wᵀ on every path of this
// machine (AVX-512's one-row kernel and dot4z, AVX2's dot4, the pure-Go
// fallback) against a float64 product: depths around the kernels' 16
// lanes, rows around their quadruples and their 256-row blocks, padded
// strides, accumulation into C, one to three threads; AVX-512's one-row
// products with one stream and with two.
func TestGemvPaths(t *testing.T) {
	for _, two := range []bool{true, false} {
		t.Run(fmt.Sprintf("streams2=%v", two), func(t *testing.T) {
			saved := gemvStreams2
			defer func() { gemvStreams2 = saved }()
			gemvStreams2 = two
			testGemvPaths(t)
		})
	}
}

func testGemvPaths(t *testing.T) {
	exclusive(t)
	r := newRand(t)
	saved := active
	defer func() { active = saved }()
	paths := []*path{nil}
	for _, p := range asmPaths {
		if cpu.Detected >= p.level {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		active = p
		name := "generic"
		if p != nil {
			name = p.name
		}
		for _, n := range []int{1, 3, 4, 7, 256, 259, 1031} {
			for _, k := range []int{15, 16, 17, 33, 576, 771} {
				for m := 1; m <= gemvMaxRows; m++ {
					lda, ldb, ldc := k+r.IntN(3), k+r.IntN(5), n+r.IntN(3)
					a, b := randSlice(r, m*lda), randSlice(r, n*ldb)
					c := randSlice(r, m*ldc)
					c0 := append([]float32(nil), c...)
					acc := r.IntN(2) == 0
					threads := 1 + r.IntN(3)
					Sgemm(false, true, m, n, k, a, lda, b, ldb, c, ldc, acc, threads)
					what := fmt.Sprintf("%s m=%d n=%d k=%d acc=%v threads=%d", name, m, n, k, acc, threads)
					for i := range m {
						for j := range n {
							var want, scale float64
							if acc {
								want, scale = float64(c0[i*ldc+j]), math.Abs(float64(c0[i*ldc+j]))
							}
							for q := range k {
								v := float64(a[i*lda+q]) * float64(b[j*ldb+q])
								want += v
								scale += math.Abs(v)
							}
							if got := float64(c[i*ldc+j]); !(math.Abs(got-want) <= tol(scale)) {
								t.Fatalf("%s: C[%d][%d] = %v, want %v", what, i, j, got, want)
							}
						}
						if i < m-1 {
							for j := n; j < ldc; j++ { // padding between rows untouched
								if c[i*ldc+j] != c0[i*ldc+j] {
									t.Fatalf("%s: C[%d][%d] in the padding changed", what, i, j)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestGemvBF16Paths checks the few-row products with a bfloat16 Wᵀ on each
// dot kernel this machine runs (gemvBF16AVX512, dot4BF16AVX2, Go)
// against a float64 product of the same values: depths around the
// kernels' 16 and 32 elements, rows around quadruples and 256-row blocks,
// padded strides, float32 and bfloat16 rows of A, one to three threads;
// within 2⁻²⁰ of Σ|a·b| as TestGemmBF16.
func TestGemvBF16Paths(t *testing.T) {
	r := newRand(t)
	defer func(w, d bool, pf int) { gemvBF16Asm, dot16Asm, gemvPrefetchBF16 = w, d, pf }(gemvBF16Asm, dot16Asm, gemvPrefetchBF16)
	type kernels struct {
		name       string
		wide, dot2 bool
		prefetch   int // gemvPrefetchBF16
	}
	ks := []kernels{{"go", false, false, 0}}
	if dot16Asm {
		ks = append(ks, kernels{"avx2", false, true, 0})
	}
	if gemvBF16Asm {
		ks = append(ks, kernels{"avx512", true, true, 0}, kernels{"avx512-prefetch", true, true, 1 << 10})
	}
	for _, kn := range ks {
		gemvBF16Asm, dot16Asm, gemvPrefetchBF16 = kn.wide, kn.dot2, kn.prefetch
		for _, n := range []int{1, 5, 8, 256, 263, 1030} {
			for _, k := range []int{16, 31, 32, 33, 63, 64, 100, 768} {
				for m := 1; m <= gemvMaxRows; m++ {
					ah := r.IntN(3) == 0
					a := randMat16(r, m, k, false, ah, r.IntN(3))
					b := randMat16(r, k, n, true, true, r.IntN(4))
					ldc := n + r.IntN(2)
					c := make([]float32, (m-1)*ldc+n)
					for i := range c {
						c[i] = float32(math.NaN())
					}
					threads := 1 + r.IntN(3)
					GemmBF16(m, n, k, a, b, c, ldc, threads)
					what := fmt.Sprintf("%s m=%d n=%d k=%d A bf16=%v threads=%d", kn.name, m, n, k, ah, threads)
					for i := range m {
						for j := range n {
							want, mag := product64(a, b, i, j, k)
							if got := float64(c[i*ldc+j]); !(math.Abs(got-want) <= mag*0x1p-20) {
								t.Fatalf("%s: C[%d,%d] = %v, want %v", what, i, j, got, want)
							}
						}
					}
				}
			}
		}
	}
}
