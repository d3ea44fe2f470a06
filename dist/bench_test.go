package dist

import (
	"slices"
	"testing"
	"time"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// recipeConfig is nanoGPT's CPU recipe on tiny Shakespeare (65 characters):
// the model whose gradients scripts/bench_dist.sh reduces.
var recipeConfig = nn.GPTConfig{VocabSize: 65, BlockSize: 64, NLayer: 4, NHead: 4, NEmbd: 128}

// benchWorld is Init's Comm: under mpirun, the job's; alone, one process.
func benchWorld(b *testing.B) *Comm {
	c, err := Init()
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkSyncGrads times DataParallel.SyncGrads on the recipe's
// gradients as Backward leaves them: already in the bucket (the gradient
// buffers), so that SyncGrads is one in-place collective. Run it under
// mpirun with a fixed -test.benchtime=Nx so that every rank runs the same
// iterations (scripts/bench_dist.sh).
func BenchmarkSyncGrads(b *testing.B) { benchSyncGrads(b, false) }

// BenchmarkSyncGradsCopied is BenchmarkSyncGrads with every gradient in a
// storage of its own, as without gradient buffers: copied into the bucket
// (scaled) and back.
func BenchmarkSyncGradsCopied(b *testing.B) { benchSyncGrads(b, true) }

func benchSyncGrads(b *testing.B, copies bool) {
	c := benchWorld(b)
	model := nn.NewGPTWith(recipeConfig, tensor.NewGenerator(1))
	params := model.Parameters()
	dp, err := newDataParallel(c, params, DataParallelConfig{}, copies)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, p := range params {
		g := tensor.OnesLike(p)
		if buf, _ := p.GradBuffer(); buf != nil {
			g = buf.Fill_(1) // where Backward writes
		}
		p.SetGrad(g)
		n += p.Numel()
	}
	b.SetBytes(int64(4 * n))
	timed(b, n, func() error { return dp.SyncGrads() })
}

// BenchmarkAllReduceFlat times Comm.AllReduceFloat32s (Sum) on one buffer
// of the recipe's parameter count: the collective without DataParallel's
// copies.
func BenchmarkAllReduceFlat(b *testing.B) {
	c := benchWorld(b)
	n := nn.NumParams(nn.NewGPTWith(recipeConfig, tensor.NewGenerator(1)))
	buf := make([]float32, n)
	b.SetBytes(int64(4 * n))
	timed(b, n, func() error { return c.AllReduceFloat32s(buf, Sum) })
}

// timed runs f b.N times and reports, besides the mean, the median time
// of one call (the load of other processes on a shared machine skews the
// mean) and the number of floats n.
func timed(b *testing.B, n int, f func() error) {
	ms := make([]float64, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		ms = append(ms, float64(time.Since(t0))/1e6)
	}
	b.StopTimer()
	slices.Sort(ms)
	b.ReportMetric(ms[len(ms)/2], "median-ms")
	b.ReportMetric(float64(n), "floats")
}
