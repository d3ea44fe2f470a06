package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/wickml/wick/internal/blas"
	"github.com/wickml/wick/internal/cputime"
	"github.com/wickml/wick/internal/kernels"
	"github.com/wickml/wick/internal/parallel"
)

// attentionFull is the CPU backend's Attention as it was before the causal
// path skipped the masked triangle: full t×t products per head, the masked
// part cleared afterwards. The tests hold the blocked kernels to its bits.
func attentionFull(ys, ps, xs []float32, b, t, nh, hs int, causal bool) {
	c := nh * hs
	scale := attentionScale(hs)
	parallel.For(b*nh, 1, func(lo, hi int) {
		for task := lo; task < hi; task++ {
			bi, h := task/nh, task%nh
			base := bi*t*3*c + h*hs
			q, k, v := xs[base:], xs[base+c:], xs[base+2*c:]
			pr := ps[task*t*t : (task+1)*t*t]
			blas.Sgemm(false, true, t, t, hs, q, 3*c, k, 3*c, pr, t, false, 1)
			for i := range t {
				row := pr[i*t : (i+1)*t]
				if causal {
					softmaxCausalRow(row, i+1, scale)
				} else {
					kernels.SoftmaxScaled(row, scale)
				}
			}
			blas.Sgemm(false, false, t, hs, t, pr, t, v, 3*c, ys[bi*t*c+h*hs:], c, false, 1)
		}
	})
}

// attentionGradFull is AttentionGrad's full-product form, the companion of
// attentionFull.
func attentionGradFull(ds, gs, ps, xs []float32, b, t, nh, hs int, causal bool) {
	c := nh * hs
	scale := attentionScale(hs)
	parallel.For(b*nh, 1, func(lo, hi int) {
		dp := make([]float32, t*t)
		for task := lo; task < hi; task++ {
			bi, h := task/nh, task%nh
			base := bi*t*3*c + h*hs
			q, k, v := xs[base:], xs[base+c:], xs[base+2*c:]
			dq, dk, dv := ds[base:], ds[base+c:], ds[base+2*c:]
			g := gs[bi*t*c+h*hs:]
			pr := ps[task*t*t : (task+1)*t*t]
			blas.Sgemm(true, false, t, hs, t, pr, t, g, c, dv, 3*c, false, 1)
			blas.Sgemm(false, true, t, t, hs, g, c, v, 3*c, dp, t, false, 1)
			for i := range t {
				drow, prow := dp[i*t:(i+1)*t], pr[i*t:(i+1)*t]
				if causal {
					softmaxGradCausalRow(drow, prow, i+1, scale)
				} else {
					kernels.SoftmaxGradScaled(drow, prow, scale)
				}
			}
			blas.Sgemm(false, false, t, hs, t, dp, t, k, 3*c, dq, 3*c, false, 1)
			blas.Sgemm(true, false, t, hs, t, dp, t, q, 3*c, dk, 3*c, false, 1)
		}
	})
}

// attnCase is one shape of the attention tests and benchmarks.
type attnCase struct{ b, t, nh, hs int }

// attnOut holds one run of the attention kernels: y, p and dqkv.
type attnOut struct{ y, p, dx []float32 }

// run runs the blocked kernels of the CPU backend (full false) or
// attentionFull and attentionGradFull (full true) on qkv and dy, into
// outputs filled with a NaN so that an element left unwritten shows.
func (s attnCase) run(qkv, dy []float32, causal, full bool) attnOut {
	c := s.nh * s.hs
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = poison
		}
		return x
	}
	o := attnOut{y: fill(s.b * s.t * c), p: fill(s.b * s.nh * s.t * s.t), dx: fill(len(qkv))}
	if full {
		attentionFull(o.y, o.p, qkv, s.b, s.t, s.nh, s.hs, causal)
		attentionGradFull(o.dx, dy, o.p, qkv, s.b, s.t, s.nh, s.hs, causal)
		return o
	}
	st := func(x []float32) Storage { return &cpuStorage{f: x} }
	cpu := cpuBackend{}
	cpu.Attention(st(o.y), st(o.p), st(qkv), s.b, s.t, s.nh, s.hs, causal)
	cpu.AttentionGrad(st(o.dx), st(dy), st(o.p), st(qkv), s.b, s.t, s.nh, s.hs, causal)
	return o
}

// attnSameBits reports the first element where got and want differ in their
// bits, as an error naming what.
func attnSameBits(what string, got, want []float32) error {
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Errorf("%s[%d] = %v (%#08x), the full products give %v (%#08x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	return nil
}

// TestAttentionCausalBlocksBitIdentical checks that the CPU backend's
// attention, whose causal path computes only the blocks of its products
// that the mask keeps, gives the bits of the full products (attentionFull,
// attentionGradFull) in y, p and the gradient of qkv: causal and not, on
// ragged lengths, with the blocks of causalBlockRows and others, and with
// lengths past internal/blas's depth blocks (256 or more), where the
// skipped depth must not regroup the sums. The inputs are finite: a non-finite value at a
// masked position is the one case the two differ (see
// TestAttentionCausalMaskedNonFinite). Some inputs are exact zeros and
// one case has scores large enough that probabilities underflow to 0
// below the diagonal.
func TestAttentionCausalBlocksBitIdentical(t *testing.T) {
	exclusive(t)
	defer func(n int) { causalBlockTest = n }(causalBlockTest)
	r := rand.New(rand.NewPCG(11, 12))
	cases := []attnCase{
		{1, 1, 1, 1}, {2, 1, 2, 3}, {1, 4, 2, 5}, {2, 5, 3, 4}, {1, 17, 2, 7},
		{2, 63, 2, 16}, {2, 64, 4, 32}, {1, 65, 3, 8}, {1, 130, 2, 12},
		{1, 256, 2, 32}, {1, 300, 1, 16}, {1, 531, 1, 8}, {1, 1024, 1, 4},
	}
	for _, blk := range []int{0, 10, 16, 48} { // 0: causalBlockRows's rule
		causalBlockTest = blk
		for ci, s := range cases {
			for _, causal := range []bool{true, false} {
				c := s.nh * s.hs
				scale := float32(2)
				if ci%4 == 3 {
					scale = 20 // probabilities underflow to 0
				}
				qkv := make([]float32, s.b*s.t*3*c)
				for i := range qkv {
					qkv[i] = float32(r.NormFloat64()) * scale
					if r.IntN(16) == 0 {
						qkv[i] = 0
					}
				}
				dy := make([]float32, s.b*s.t*c)
				for i := range dy {
					dy[i] = float32(r.NormFloat64())
				}
				got, want := s.run(qkv, dy, causal, false), s.run(qkv, dy, causal, true)
				for _, e := range []error{attnSameBits("y", got.y, want.y), attnSameBits("p", got.p, want.p), attnSameBits("dqkv", got.dx, want.dx)} {
					if e != nil {
						t.Errorf("B=%d T=%d nh=%d hs=%d causal=%v block=%d: %v", s.b, s.t, s.nh, s.hs, causal, blk, e)
					}
				}
			}
		}
	}
}

// TestAttentionCausalMaskedNonFinite covers the one case where the
// blocked causal kernels differ from the full products: an Inf in V's and
// K's row j at the positions the mask hides from earlier rows. The full
// products give NaN in those rows (0·Inf); the blocked ones leave every
// row of the blocks before j's as if row j held zeros (y, p and dQ), and
// rows j and after non-finite.
func TestAttentionCausalMaskedNonFinite(t *testing.T) {
	exclusive(t)
	defer func(n int) { causalBlockTest = n }(causalBlockTest)
	causalBlockTest = 16
	s := attnCase{1, 64, 1, 8}
	const j = 40 // in the block [32, 48)
	r := rand.New(rand.NewPCG(5, 6))
	qkv := make([]float32, s.t*3*s.hs)
	for i := range qkv {
		qkv[i] = float32(r.NormFloat64())
	}
	dy := make([]float32, s.t*s.hs)
	for i := range dy {
		dy[i] = float32(r.NormFloat64())
	}
	inf := append([]float32(nil), qkv...)
	zero := append([]float32(nil), qkv...)
	for x := range s.hs {
		inf[j*3*s.hs+s.hs+x], inf[j*3*s.hs+2*s.hs+x] = float32(math.Inf(1)), float32(math.Inf(1))
		zero[j*3*s.hs+s.hs+x], zero[j*3*s.hs+2*s.hs+x] = 0, 0
	}
	got, want, full := s.run(inf, dy, true, false), s.run(zero, dy, true, false), s.run(inf, dy, true, true)
	rows := func(x []float32, w, from, to int) []float32 { return x[from*w : to*w] }
	for _, e := range []error{
		attnSameBits("y", rows(got.y, s.hs, 0, 32), rows(want.y, s.hs, 0, 32)),
		attnSameBits("p", rows(got.p, s.t, 0, 32), rows(want.p, s.t, 0, 32)),
	} {
		if e != nil {
			t.Error(e)
		}
	}
	for i := range 32 {
		for x := range s.hs {
			if g, w := got.dx[i*3*s.hs+x], want.dx[i*3*s.hs+x]; math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("dq[%d][%d] = %v with Inf in row %d, %v with zeros there", i, x, g, j, w)
			}
		}
	}
	if y := full.y[0]; !math.IsNaN(float64(y)) {
		t.Errorf("the full products give y[0][0] = %v, want NaN (0·Inf): the case does not reach the masked terms", y)
	}
	for i := j; i < s.t; i++ {
		if y := got.y[i*s.hs]; !math.IsNaN(float64(y)) && !math.IsInf(float64(y), 0) {
			t.Errorf("y[%d][0] = %v, want non-finite (row %d sees the Inf of row %d)", i, y, i, j)
		}
	}
}

// attnBenchCases are the shapes of BenchmarkAttentionKernels: the CPU
// recipe's (B=12, T=64, 4 heads of 32) and GPT-2's (B=1, T=1024, 12 heads
// of 64).
var attnBenchCases = []struct {
	name string
	attnCase
}{{"recipe", attnCase{12, 64, 4, 32}}, {"gpt2", attnCase{1, 1024, 12, 64}}}

// attnBenchRunner returns a function that runs the causal Attention and
// AttentionGrad once on random inputs of shape s, blocked as the backend
// runs them (full false) or as full products (attentionFull,
// attentionGradFull).
func attnBenchRunner(s attnCase) func(full bool) {
	r := rand.New(rand.NewPCG(1, 2))
	c := s.nh * s.hs
	qkv, dy := make([]float32, s.b*s.t*3*c), make([]float32, s.b*s.t*c)
	for i := range qkv {
		qkv[i] = float32(r.NormFloat64())
	}
	for i := range dy {
		dy[i] = float32(r.NormFloat64())
	}
	y, p, dx := make([]float32, len(dy)), make([]float32, s.b*s.nh*s.t*s.t), make([]float32, len(qkv))
	st := func(x []float32) Storage { return &cpuStorage{f: x} }
	return func(full bool) {
		if full {
			attentionFull(y, p, qkv, s.b, s.t, s.nh, s.hs, true)
			attentionGradFull(dx, dy, p, qkv, s.b, s.t, s.nh, s.hs, true)
			return
		}
		cpuBackend{}.Attention(st(y), st(p), st(qkv), s.b, s.t, s.nh, s.hs, true)
		cpuBackend{}.AttentionGrad(st(dx), st(dy), st(p), st(qkv), s.b, s.t, s.nh, s.hs, true)
	}
}

// BenchmarkAttentionKernels times the CPU backend's causal Attention and
// AttentionGrad together on attnBenchCases, blocked as the backend runs
// them and as full products, with the CPU time per op beside the wall
// time. Run with -cpu 1 for one thread.
func BenchmarkAttentionKernels(b *testing.B) {
	for _, s := range attnBenchCases {
		run := attnBenchRunner(s.attnCase)
		for _, impl := range []string{"full", "blocked"} {
			b.Run("shape="+s.name+"/impl="+impl, func(b *testing.B) {
				c0 := cputime.Process()
				for b.Loop() {
					run(impl == "full")
				}
				cputime.ReportPerOp(b, c0)
			})
		}
	}
}

// BenchmarkAttentionKernelsPaired is BenchmarkAttentionKernels with the
// two alternating op by op, so that load from other processes falls on
// both alike: it reports the CPU time per op of each (full-cpu-ns/op,
// blocked-cpu-ns/op) and their ratio (blocked/full).
func BenchmarkAttentionKernelsPaired(b *testing.B) {
	for _, s := range attnBenchCases {
		run := attnBenchRunner(s.attnCase)
		b.Run("shape="+s.name, func(b *testing.B) {
			var full, blocked time.Duration
			for b.Loop() {
				c0 := cputime.Process()
				run(true)
				c1 := cputime.Process()
				run(false)
				full, blocked = full+c1-c0, blocked+cputime.Process()-c1
			}
			b.ReportMetric(float64(full)/float64(b.N), "full-cpu-ns/op")
			b.ReportMetric(float64(blocked)/float64(b.N), "blocked-cpu-ns/op")
			b.ReportMetric(float64(blocked)/float64(full), "blocked/full")
		})
	}
}
