package tensor

import (
	"flag"
	"math"
	"testing"

	cpufeat "github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/kernels"
)

var unaryExhaustive = flag.Bool("unary.exhaustive", false,
	"TestUnaryKernelsULP sweeps all 2³² float32 inputs instead of every 251st")

// unaryKernelOps are the rows whose avx512 and avx2 kernels compute fwd
// within 1 ulp (rather than approximating a ref, as GELU's do).
var unaryKernelOps = []UnaryOp{OpExp, OpTanh, OpSigmoid}

// unaryULP is ulps for the unary kernels: NaN matches NaN only, and any
// other pair of values differing in sign (±0 included) counts as far apart.
func unaryULP(got, want float32) int64 {
	if got != got || want != want {
		if got != got && want != want {
			return 0
		}
		return math.MaxInt64
	}
	return ulps(got, want)
}

// TestUnaryKernels checks each kernel row's dense path on every kernel
// path this machine runs against fwd, element by element, on special
// values, fresh random data of ragged lengths (so that the AVX-512, AVX2
// and Go parts each see the values) and strided views through Tensor.
func TestUnaryKernels(t *testing.T) {
	inf := float32(math.Inf(1))
	den := math.Float32frombits(1)
	specials := []float32{0, float32(math.Copysign(0, -1)), inf, -inf, float32(math.NaN()),
		den, -den, math.Float32frombits(0x007fffff), -math.Float32frombits(0x007fffff),
		88.8, -88.8, 88.72, 88.73, -104, -103.97, -87.3, 1e-8, -1e-8, 3e-4, -3e-4,
		9, -9, 9.1, -9.1, 17, -17, 1e30, -1e30, math.MaxFloat32, -math.MaxFloat32}
	g := NewGenerator(uint64(len(specials)))
	forEachPath(t, func(asm string) {
		for _, op := range unaryKernelOps {
			u := &unaryOps[op]
			check := func(what string, xs []float32) {
				t.Helper()
				got := make([]float32, len(xs))
				u.dense(got, xs, UnaryParams{})
				for k, x := range xs {
					if want := u.fwd(x, UnaryParams{}); unaryULP(got[k], want) > 1 {
						t.Errorf("%s %s %s: op(%v) = %v, fwd gives %v", asm, u.name, what, x, got[k], want)
					}
				}
			}
			// the specials at every offset of a block of 40 (so each meets
			// every lane and the Go tail)
			for off := range 40 {
				xs := make([]float32, 40+len(specials))
				copy(xs[off:], specials)
				check("specials", xs)
			}
			for _, n := range []int{0, 1, 7, 15, 16, 17, 1023} {
				xs := make([]float32, n)
				for k := range xs {
					xs[k] = float32(g.NormFloat64() * 20)
				}
				check("random", xs)
			}
			// strided: a transposed view goes through the strided loop,
			// its contiguous copy through dense
			x := g.Randn(37, 29).MulScalar(10)
			y := x.Transpose(0, 1).unary(op, UnaryParams{})
			xs, ys := x.Transpose(0, 1).Contiguous().Float32s(), y.Contiguous().Float32s()
			for k := range xs {
				if want := u.fwd(xs[k], UnaryParams{}); unaryULP(ys[k], want) > 1 {
					t.Errorf("%s %s strided: op(%v) = %v, fwd gives %v", asm, u.name, xs[k], ys[k], want)
				}
			}
		}
	})
}

// TestUnaryKernelsULP sweeps float32 inputs (every 251st bit pattern, or
// all of them with -unary.exhaustive) through each kernel on each path
// this machine runs and reports the largest difference from fwd in ulp
// and how many results differ; more than 1 ulp fails.
func TestUnaryKernelsULP(t *testing.T) {
	step := uint64(251)
	if *unaryExhaustive {
		step = 1
	}
	forEachPath(t, func(asm string) {
		if asm == "go" {
			return
		}
		for _, op := range unaryKernelOps {
			u := &unaryOps[op]
			const block = 1 << 14
			xs := make([]float32, block)
			got := make([]float32, block)
			var worst int64
			var worstX float32
			var differ, total uint64
			for b := uint64(0); b < 1<<32; b += block * step {
				n := 0
				for ; n < block && b+uint64(n)*step < 1<<32; n++ {
					xs[n] = math.Float32frombits(uint32(b + uint64(n)*step))
				}
				u.dense(got[:n], xs[:n], UnaryParams{})
				for k := range n {
					d := unaryULP(got[k], u.fwd(xs[k], UnaryParams{}))
					if d > 0 {
						differ++
					}
					if d > worst {
						worst, worstX = d, xs[k]
					}
				}
				total += uint64(n)
			}
			t.Logf("%s %s: %d inputs, %d differ from fwd, worst %d ulp (at %v)", asm, u.name, total, differ, worst, worstX)
			if worst > 1 {
				t.Errorf("%s %s: %d ulp from fwd at %v, want at most 1", asm, u.name, worst, worstX)
			}
		}
	})
}

// TestUnaryKernelsAVX512MatchAVX2 checks that the AVX-512 kernels of the
// rows without ref give their AVX2 twins' bits, on random values and the
// special values in every lane.
func TestUnaryKernelsAVX512MatchAVX2(t *testing.T) {
	if cpufeat.Detected < cpufeat.AVX512 || !kernels.HasAsm {
		t.Skipf("no AVX-512 kernels to compare: this build or machine runs at most %v", cpufeat.Detected)
	}
	g := NewGenerator(99)
	const n = 4096
	x := make([]float32, n)
	for k := range x {
		x[k] = float32(g.NormFloat64() * 30)
	}
	sp := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		math.Float32frombits(1), 88.8, -88.8, -104, 1e-30}
	for k := range 16 * len(sp) {
		x[k] = sp[(k/16+k)%len(sp)]
	}
	for _, op := range unaryKernelOps {
		u := &unaryOps[op]
		a, b := make([]float32, n), make([]float32, n)
		restore := setKernelPath(t, "avx512")
		u.dense(a, x, UnaryParams{})
		restore()
		restore = setKernelPath(t, "avx2")
		u.dense(b, x, UnaryParams{})
		restore()
		for k := range x {
			if math.Float32bits(a[k]) != math.Float32bits(b[k]) && !(a[k] != a[k] && b[k] != b[k]) {
				t.Errorf("%s(%v): avx512 %v, avx2 %v", u.name, x[k], a[k], b[k])
			}
		}
	}
}
