package blas

import (
	"fmt"
	"testing"

	"github.com/wickml/wick/internal/cputime"
)

// recipeShapes are the products of one training step of the GPT CPU recipe
// (cmd/benchtrain: 4 layers, n_embd 128, 4 heads, batch 12 × block 64), with
// how many times each runs per step (attention's per head and batch row).
var recipeShapes = []struct {
	benchShape
	calls int
}{
	{benchShape{"qk64x32x64NT", 64, 32, 64, false, true}, 384},
	{benchShape{"dv64x64x32TN", 64, 64, 32, true, false}, 384},
	{benchShape{"av64x64x32NN", 64, 64, 32, false, false}, 384},
	{benchShape{"fc768x128x512NT", 768, 128, 512, false, true}, 4},
	{benchShape{"fcdx768x512x128NN", 768, 512, 128, false, false}, 4},
	{benchShape{"attn768x128x384NT", 768, 128, 384, false, true}, 4},
	{benchShape{"proj768x512x128NT", 768, 512, 128, false, true}, 4},
	{benchShape{"projdx768x128x512NN", 768, 128, 512, false, false}, 4},
	{benchShape{"attndx768x384x128NN", 768, 384, 128, false, false}, 4},
	{benchShape{"aproj768x128x128NT", 768, 128, 128, false, true}, 4},
	{benchShape{"aprojdx768x128x128NN", 768, 128, 128, false, false}, 4},
	{benchShape{"projdw128x768x512TN", 128, 768, 512, true, false}, 4},
	{benchShape{"fcdw512x768x128TN", 512, 768, 128, true, false}, 4},
	{benchShape{"attndw384x768x128TN", 384, 768, 128, true, false}, 4},
	{benchShape{"aprojdw128x768x128TN", 128, 768, 128, true, false}, 4},
	{benchShape{"head768x128x65NT", 768, 128, 65, false, true}, 1},
	{benchShape{"headdx768x65x128NN", 768, 65, 128, false, false}, 1},
	{benchShape{"headdw65x768x128TN", 65, 768, 128, true, false}, 1},
}

// BenchmarkRecipe runs each product of the CPU recipe's step on one thread
// and reports cpuGFLOP/s and CPU microseconds per step spent on it (calls ×
// CPU time per call); "all" runs the whole step's products.
func BenchmarkRecipe(b *testing.B) {
	for _, s := range recipeShapes {
		b.Run(s.name, func(b *testing.B) {
			a, lda, bm, ldb, c := s.operands()
			flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
			cpu0 := cputime.Process()
			for b.Loop() {
				Sgemm(s.transA, s.transB, s.m, s.n, s.k, a, lda, bm, ldb, c, s.n, false, 1)
			}
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "cpuGFLOP/s")
				b.ReportMetric(cpu.Seconds()*1e6/float64(b.N)*float64(s.calls), "cpuµs/step")
			}
		})
	}
	b.Run("all", func(b *testing.B) {
		type op struct {
			benchShape
			calls    int
			a, b, c  []float32
			lda, ldb int
		}
		var ops []op
		for _, s := range recipeShapes {
			a, lda, bm, ldb, c := s.operands()
			ops = append(ops, op{s.benchShape, s.calls, a, bm, c, lda, ldb})
		}
		cpu0 := cputime.Process()
		for b.Loop() {
			for _, o := range ops {
				for range o.calls {
					Sgemm(o.transA, o.transB, o.m, o.n, o.k, o.a, o.lda, o.b, o.ldb, o.c, o.n, false, 1)
				}
			}
		}
		if cpu := cputime.Process() - cpu0; cpu > 0 {
			b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpums/step")
		}
	})
	_ = fmt.Sprint
}
