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

// gpt2Shapes are GPT-2 124M's products at a 1024-token context (one
// sequence): the attention's packed projection, the MLP's two products and
// the attention's output projection (x·Wᵀ), and one head's scores and
// values.
var gpt2Shapes = []benchShape{
	{"gpt2attn1024x768x2304NT", 1024, 768, 2304, false, true},
	{"gpt2fc1024x768x3072NT", 1024, 768, 3072, false, true},
	{"gpt2proj1024x3072x768NT", 1024, 3072, 768, false, true},
	{"gpt2aproj1024x768x768NT", 1024, 768, 768, false, true},
	{"gpt2qk1024x64x1024NT", 1024, 64, 1024, false, true},
	{"gpt2av1024x1024x64NN", 1024, 1024, 64, false, false},
}

// BenchmarkRecipeBF16 times each product of the CPU recipe's step and
// GPT-2's shapes on one thread in float32 (Sgemm) and as autocast runs it
// (GemmBF16 of float32 operands rounded to bfloat16 as they are packed:
// "bf16round"; "bf16" takes operands already in bfloat16), reporting
// cpuGFLOP/s (per second of CPU time) and, for the recipe, CPU
// microseconds per step. "all" runs the recipe step's products.
func BenchmarkRecipeBF16(b *testing.B) {
	type kind struct {
		name string
		run  func(s benchShape, a []float32, lda int, bm []float32, ldb int, ah, bh []uint16, c []float32)
	}
	kinds := []kind{
		{"fp32", func(s benchShape, a []float32, lda int, bm []float32, ldb int, _, _ []uint16, c []float32) {
			Sgemm(s.transA, s.transB, s.m, s.n, s.k, a, lda, bm, ldb, c, s.n, false, 1)
		}},
		{"bf16round", func(s benchShape, a []float32, lda int, bm []float32, ldb int, _, _ []uint16, c []float32) {
			GemmBF16(s.m, s.n, s.k, Mat16{F: a, LD: lda, Trans: s.transA, Round: true}, Mat16{F: bm, LD: ldb, Trans: s.transB, Round: true}, c, s.n, 1)
		}},
		{"bf16", func(s benchShape, _ []float32, lda int, _ []float32, ldb int, ah, bh []uint16, c []float32) {
			GemmBF16(s.m, s.n, s.k, Mat16{H: ah, LD: lda, Trans: s.transA}, Mat16{H: bh, LD: ldb, Trans: s.transB}, c, s.n, 1)
		}},
	}
	halves := func(f []float32) []uint16 {
		h := make([]uint16, len(f))
		round16(h, f)
		return h
	}
	var shapes []benchShape
	calls := map[string]int{}
	for _, s := range recipeShapes {
		shapes = append(shapes, s.benchShape)
		calls[s.name] = s.calls
	}
	shapes = append(shapes, gpt2Shapes...)
	for _, s := range shapes {
		a, lda, bm, ldb, c := s.operands()
		ah, bh := halves(a), halves(bm)
		flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
		for _, kd := range kinds {
			b.Run(s.name+"/"+kd.name, func(b *testing.B) {
				cpu0 := cputime.Process()
				for b.Loop() {
					kd.run(s, a, lda, bm, ldb, ah, bh, c)
				}
				if cpu := cputime.Process() - cpu0; cpu > 0 {
					b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "cpuGFLOP/s")
					if n := calls[s.name]; n > 0 {
						b.ReportMetric(cpu.Seconds()*1e6/float64(b.N)*float64(n), "cpuµs/step")
					}
				}
			})
		}
	}
	for _, kd := range kinds[:2] {
		b.Run("all/"+kd.name, func(b *testing.B) {
			type op struct {
				s        benchShape
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
						kd.run(o.s, o.a, o.lda, o.b, o.ldb, nil, nil, o.c)
					}
				}
			}
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpums/step")
			}
		})
	}
}
