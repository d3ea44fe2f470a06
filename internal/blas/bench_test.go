package blas

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/cputime"
	"github.com/wickml/wick/internal/parallel"
)

// benchShape is one product of the benchmark table: squares and the shapes
// of the GPT CPU recipe (batch·block = 768 rows, n_embd 128, MLP 512).
type benchShape struct {
	name           string
	m, k, n        int
	transA, transB bool
}

var benchShapes = []benchShape{
	{"sq64", 64, 64, 64, false, false},
	{"sq256", 256, 256, 256, false, false},
	{"sq512", 512, 512, 512, false, false},
	{"sq1024", 1024, 1024, 1024, false, false},
	// x·W_fcᵀ (Linear forward), and the same product in the other layouts
	{"gpt768x128x512NT", 768, 128, 512, false, true},
	{"gpt768x128x512NN", 768, 128, 512, false, false},
	{"gpt768x128x512TN", 768, 128, 512, true, false},
	{"gpt768x128x512TT", 768, 128, 512, true, true},
	// MLP projection forward, its input gradient, its weight gradient
	{"gpt768x512x128NT", 768, 512, 128, false, true},
	{"gpt768x512x128NN", 768, 512, 128, false, false},
	{"gpt512x768x128TN", 512, 768, 128, true, false},
	// weight gradients as tensor's MatMul computes them for a Wᵀ operand,
	// (Gᵀ·X) in W's layout, and the transposed orientation (Xᵀ·G) it
	// used before: c_attn, c_fc, c_proj (attention), c_proj (MLP)
	{"gpt384x768x128TN", 384, 768, 128, true, false},
	{"gpt128x768x384TN", 128, 768, 384, true, false},
	{"gpt128x768x512TN", 128, 768, 512, true, false},
	{"gpt128x768x128TN", 128, 768, 128, true, false},
}

func (s benchShape) operands() (a []float32, lda int, b []float32, ldb int, c []float32) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b, c = randSlice(r, s.m*s.k), randSlice(r, s.k*s.n), make([]float32, s.m*s.n)
	lda, ldb = s.k, s.n
	if s.transA {
		lda = s.m
	}
	if s.transB {
		ldb = s.k
	}
	return
}

func reportGflops(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkSgemm measures Sgemm with 1 and 2 threads; GFLOP/s counts 2mnk
// per second of wall time. With one thread it also reports cpuGFLOP/s, per
// second of the process's CPU time: on a machine shared with other work
// that is the steadier measure of the code itself.
func BenchmarkSgemm(b *testing.B) {
	for _, s := range benchShapes {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/t%d", s.name, threads), func(b *testing.B) {
				a, lda, bm, ldb, c := s.operands()
				flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
				cpu0 := cputime.Process()
				for b.Loop() {
					Sgemm(s.transA, s.transB, s.m, s.n, s.k, a, lda, bm, ldb, c, s.n, false, threads)
				}
				if cpu := cputime.Process() - cpu0; threads == 1 && cpu > 0 {
					b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "cpuGFLOP/s")
				}
				reportGflops(b, flops)
			})
		}
	}
}

// BenchmarkBatched is attention's batched product: 48 (batch·head) products
// of 64×32·32×64 (q·kᵀ) and 64×64·64×32 (att·v), spread over the pool
// one product per task, as the tensor CPU backend does.
func BenchmarkBatched(b *testing.B) {
	exclusive(b)
	const batch = 48
	for _, s := range []benchShape{{"qk64x32x64NT", 64, 32, 64, false, true}, {"av64x64x32NN", 64, 64, 32, false, false}} {
		b.Run(s.name, func(b *testing.B) {
			a, lda, bm, ldb, _ := s.operands()
			c := make([]float32, batch*s.m*s.n)
			for b.Loop() {
				parallel.For(batch, 1, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						Sgemm(s.transA, s.transB, s.m, s.n, s.k, a, lda, bm, ldb, c[i*s.m*s.n:], s.n, false, 1)
					}
				})
			}
			reportGflops(b, batch*2*float64(s.m)*float64(s.n)*float64(s.k))
		})
	}
}

// BenchmarkGeneric measures the pure-Go fallback at one size for the notes.
func BenchmarkGeneric(b *testing.B) {
	saved := active
	active = nil
	defer func() { active = saved }()
	s := benchShape{"sq256", 256, 256, 256, false, false}
	a, lda, bm, ldb, c := s.operands()
	for b.Loop() {
		Sgemm(false, false, s.m, s.n, s.k, a, lda, bm, ldb, c, s.n, false, 1)
	}
	reportGflops(b, 2*float64(s.m)*float64(s.n)*float64(s.k))
}

// BenchmarkKernel measures each micro-kernel that this machine runs alone
// on L1-resident panels of its path's depth block: the ceiling for the
// whole Sgemm. Without an assembly kernel it measures the Go one.
func BenchmarkKernel(b *testing.B) {
	ps := []*path{goPath(6, 16, 256, 96, 4096)}
	for _, p := range asmPaths {
		if cpu.Detected >= p.level {
			ps = append(ps, p)
		}
	}
	for _, p := range ps {
		b.Run(p.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			k, mr, nr := p.kc, p.mr, p.nr
			ap, bp := alignedFloats(k*mr), alignedFloats(k*nr)
			copy(ap, randSlice(r, k*mr))
			copy(bp, randSlice(r, k*nr))
			c := alignedFloats(mr * nr)
			cpu0 := cputime.Process()
			for b.Loop() {
				p.kern(1, k, &ap[0], 1, mr, 0, &bp[0], nr, &c[0], nr, 1)
			}
			flops := 2 * float64(mr*nr*k)
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "cpuGFLOP/s")
			}
			reportGflops(b, flops)
		})
	}
}

// BenchmarkGemvT measures the dot-product path on one row times GPT-2's
// largest weights (the tied head, 50257×768, and c_fc, 3072×768): a read
// of the whole weight per call, reported as GB/s of weights read.
func BenchmarkGemvT(b *testing.B) {
	for _, s := range []struct {
		name string
		n, k int
	}{{"head50257x768", 50257, 768}, {"fc3072x768", 3072, 768}} {
		r := rand.New(rand.NewPCG(1, 2))
		x, w, y := randSlice(r, s.k), randSlice(r, s.n*s.k), make([]float32, s.n)
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", s.name, threads), func(b *testing.B) {
				b.SetBytes(int64(4 * s.n * s.k))
				for b.Loop() {
					Sgemm(false, true, 1, s.n, s.k, x, s.k, w, s.k, y, s.n, false, threads)
				}
			})
		}
	}
}

// BenchmarkGemvStream measures the one-row product as text generation
// runs it: the products of a SmolLM2-135M decoder layer (q, k, v, o,
// gate, up, down) on weights read from memory, not from cache (16
// layers' weights, 283 MB, in turn), reported as GB/s of weights read,
// on the AVX2 path (dot4) and the AVX-512 one (gemv2AVX512's two streams,
// and gemv1AVX512's one), and the bfloat16 kernel at several prefetch
// distances.
func BenchmarkGemvStream(b *testing.B) {
	benchGemvStream(b, [][2]int{{576, 576}, {192, 576}, {192, 576}, {576, 576}, {1536, 576}, {1536, 576}, {576, 1536}}, 16)
}

// BenchmarkGemvStreamGPT2 measures the one-row products of GPT-2 124M's
// decoder layers (c_attn 2304×768, attention c_proj 768×768, c_fc
// 3072×768, MLP c_proj 768×3072) on 12 layers' weights in turn (340 MB
// float32, 170 MB bfloat16: never in cache), as BenchmarkGemvStream does.
func BenchmarkGemvStreamGPT2(b *testing.B) {
	benchGemvStream(b, [][2]int{{2304, 768}, {768, 768}, {3072, 768}, {768, 3072}}, 12)
}

// benchGemvStream runs the one-row products of shapes ([n, k] each) over
// layers copies of their weights in turn, float32 on each processor level
// this machine runs and bfloat16 at several prefetch distances, at one
// and two threads.
func benchGemvStream(b *testing.B, shapes [][2]int, layers int) {
	per, widest := 0, 0
	for _, s := range shapes {
		per += s[0] * s[1]
		widest = max(widest, s[0], s[1])
	}
	r := rand.New(rand.NewPCG(1, 2))
	w := randSlice(r, layers*per)
	x, y := randSlice(r, widest), make([]float32, widest)
	h := make([]uint16, len(w))
	for i := range h {
		h[i] = toBF16(w[i])
	}
	// stream times product over the layers' weights in turn, size bytes
	// an element
	stream := func(b *testing.B, threads, size int, product func(off int, s [2]int)) {
		runtime.GC()
		b.SetBytes(int64(size * per))
		off := 0
		cpu0 := cputime.Process()
		for b.Loop() {
			if off+per > len(w) {
				off = 0
			}
			for _, s := range shapes {
				product(off, s)
				off += s[0] * s[1]
			}
		}
		reportCPUBytes(b, cpu0, threads, size*per)
	}
	for _, threads := range []int{1, 2} {
		for _, level := range []cpu.Level{cpu.AVX2, cpu.AVX512} {
			b.Run(fmt.Sprintf("threads=%d/%s", threads, level), func(b *testing.B) {
				if cpu.Detected < level {
					b.Skip("not on this machine")
				}
				saved := active
				defer func() { active = saved }()
				active = pathFor(level)
				stream(b, threads, 4, func(off int, s [2]int) {
					Sgemm(false, true, 1, s[0], s[1], x, s[1], w[off:], s[1], y, s[0], false, threads)
				})
			})
		}
		// the AVX-512 path with gemv1AVX512's one stream, not two
		b.Run(fmt.Sprintf("threads=%d/%s/streams=1", threads, cpu.AVX512), func(b *testing.B) {
			if cpu.Detected < cpu.AVX512 {
				b.Skip("not on this machine")
			}
			saved, saved2 := active, gemvStreams2
			defer func() { active, gemvStreams2 = saved, saved2 }()
			active, gemvStreams2 = pathFor(cpu.AVX512), false
			stream(b, threads, 4, func(off int, s [2]int) {
				Sgemm(false, true, 1, s[0], s[1], x, s[1], w[off:], s[1], y, s[0], false, threads)
			})
		})
		for _, pf := range []int{0, 1 << 10, 4 << 10, 16 << 10} {
			b.Run(fmt.Sprintf("threads=%d/bf16/prefetch=%dKiB", threads, pf>>10), func(b *testing.B) {
				saved := gemvPrefetchBF16
				defer func() { gemvPrefetchBF16 = saved }()
				gemvPrefetchBF16 = pf
				stream(b, threads, 2, func(off int, s [2]int) {
					GemmBF16(1, s[0], s[1], Mat16{F: x, LD: s[1]}, Mat16{H: h[off:], LD: s[1], Trans: true}, y, s[0], threads)
				})
			})
		}
	}
}

// reportCPUBytes reports, for one thread, bytes per second of the
// process's CPU time since cpu0 (steadier than wall time on a shared
// machine).
func reportCPUBytes(b *testing.B, cpu0 time.Duration, threads, bytes int) {
	if cpu := cputime.Process() - cpu0; threads == 1 && cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/cpu.Seconds()/1e6, "cpuMB/s")
	}
}
