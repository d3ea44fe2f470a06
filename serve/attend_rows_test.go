package serve

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// TestDecodeRow checks the decoding rows' attention against the tensor
// path (attendCached: nn.CausalAttention over views of the cache) for
// multi-head, grouped-query and multi-query models, and that a row gets
// the same bits whether its blocks lie end to end in the cache (read in
// place) or scattered (copied). "wide" has heads of 32 features, which
// the AVX-512 loops take where they run.
func TestDecodeRow(t *testing.T) {
	wide := nn.NewGPTWith(nn.GPTConfig{VocabSize: 53, BlockSize: 64, NLayer: 2, NHead: 2, NEmbd: 64}, tensor.NewGenerator(2))
	for name, m := range map[string]nn.BatchLM{"gpt": tinyGPT(), "wide": wide, "qwen3": tinyQwen(), "llama": tinyLlama()} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, Config{Model: m, BlockSize: 4, KVCacheBytes: 1 << 20})
			if e.kh == nil {
				t.Fatal("no host cache on the CPU")
			}
			_, hkv, d := m.KVShape()
			g := tensor.NewGenerator(7)
			row, bs := hkv*d, e.cfg.BlockSize
			keys, vals := g.Randn(20, row).Float32s(), g.Randn(20, row).Float32s()
			h := hkv
			if name == "qwen3" || name == "llama" {
				h = 4 // tinyQwen and tinyLlama's query heads
			}
			together, scattered := []int{3, 4, 5, 6, 7}, []int{9, 2, 14, 0, 11}
			for _, table := range [][]int{together, scattered} {
				for p := range 20 {
					off := (table[p/bs]*bs + p%bs) * row
					copy(e.kh[1][off:off+row], keys[p*row:(p+1)*row])
					copy(e.vh[1][off:off+row], vals[p*row:(p+1)*row])
				}
			}
			for _, pos := range []int{0, 3, 4, 10, 17} {
				q := g.Randn(h, 1, d)
				var rows [][]float32
				for _, table := range [][]int{together, scattered} {
					out := make([]float32, h*d)
					buf := new([]float32)
					e.decodeRow(e.kh[1], e.vh[1], table, pos, h, hkv, d, q.Float32s(), out, buf)
					want := e.attendCached(1, table, pos, q).Float32s()
					for i := range want {
						if diff := math.Abs(float64(out[i] - want[i])); diff > 1e-5*(1+math.Abs(float64(want[i]))) {
							t.Fatalf("position %d, blocks %v: element %d is %v, nn.CausalAttention %v", pos, table, i, out[i], want[i])
						}
					}
					rows = append(rows, out)
				}
				if !slices.Equal(rows[0], rows[1]) {
					t.Errorf("position %d: the bits differ with the blocks together and scattered", pos)
				}
			}
		})
	}
}

// TestAttendChunk checks that a prefill chunk attending on the host (a
// decodeRow per token) gives what the tensor path (nn.CausalAttention over
// views of the cache) gives, for chunks of several lengths and positions
// over blocks together and scattered, for multi-head, grouped-query and
// multi-query models.
func TestAttendChunk(t *testing.T) {
	wide := nn.NewGPTWith(nn.GPTConfig{VocabSize: 53, BlockSize: 64, NLayer: 2, NHead: 2, NEmbd: 64}, tensor.NewGenerator(2))
	for name, m := range map[string]nn.BatchLM{"gpt": tinyGPT(), "wide": wide, "qwen3": tinyQwen(), "llama": tinyLlama()} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, Config{Model: m, BlockSize: 4, KVCacheBytes: 1 << 20})
			_, hkv, d := m.KVShape()
			h := hkv
			if name == "qwen3" || name == "llama" {
				h = 4 // tinyQwen and tinyLlama's query heads
			}
			g := tensor.NewGenerator(8)
			row, bs := hkv*d, e.cfg.BlockSize
			for _, table := range [][]int{{3, 4, 5, 6, 7}, {9, 2, 14, 0, 11}} {
				for _, c := range []struct{ pos, n int }{{0, 2}, {0, 7}, {3, 5}, {4, 8}, {9, 11}} {
					// the positions before the chunk are in the cache
					keys, vals := g.Randn(c.pos, row).Float32s(), g.Randn(c.pos, row).Float32s()
					for p := range c.pos {
						off := (table[p/bs]*bs + p%bs) * row
						copy(e.kh[1][off:off+row], keys[p*row:(p+1)*row])
						copy(e.vh[1][off:off+row], vals[p*row:(p+1)*row])
					}
					b := &nn.Batch{Tokens: make([]int, c.n), Seqs: []nn.BatchSeq{{Start: 0, Len: c.n, Pos: c.pos}}}
					q := g.Randn(c.n, h*d).Float32s()
					k, v := g.Randn(c.n, row).Float32s(), g.Randn(c.n, row).Float32s()
					var outs [][]float32
					for _, limit := range []int{0, math.MaxInt} { // the tensor path, then the host
						e.hostChunk = limit
						out := make([]float32, c.n*h*d)
						e.attendHost(1, b, [][]int{table}, 0, 1, q, k, v, out)
						outs = append(outs, out)
					}
					want, got := outs[0], outs[1]
					for i := range want {
						if diff := math.Abs(float64(got[i] - want[i])); diff > 1e-5*(1+math.Abs(float64(want[i]))) {
							t.Fatalf("chunk of %d from position %d, blocks %v: element %d is %v on the host, %v through the tensors", c.n, c.pos, table, i, got[i], want[i])
						}
					}
				}
			}
		})
	}
}

// BenchmarkAttendChunk times one prefill chunk's attention (one layer) on
// the host and through the tensor path, for chunks of several lengths and
// positions in models of the recipe's, GPT-2's and Qwen3's attention
// shapes; the "work" metric is chunkWork, which hostChunkWork bounds.
func BenchmarkAttendChunk(b *testing.B) {
	shapes := []struct {
		name  string
		model func() nn.BatchLM
	}{
		{"recipe", func() nn.BatchLM { // 4 heads of 32
			return nn.NewGPTWith(nn.GPTConfig{VocabSize: 65, BlockSize: 1024, NLayer: 1, NHead: 4, NEmbd: 128}, tensor.NewGenerator(1))
		}},
		{"gpt2", func() nn.BatchLM { // 12 heads of 64
			return nn.NewGPTWith(nn.GPTConfig{VocabSize: 65, BlockSize: 1024, NLayer: 1, NHead: 12, NEmbd: 768}, tensor.NewGenerator(1))
		}},
		{"qwen3", func() nn.BatchLM { // 16 query heads of 128 over 8 key/value heads
			return nn.NewLlamaWith(nn.LlamaConfig{
				ModelType: "qwen3", VocabSize: 65, HiddenSize: 256, IntermediateSize: 64, NumHiddenLayers: 1,
				NumAttentionHeads: 16, NumKeyValueHeads: 8, HeadDim: 128, MaxPositionEmbeddings: 1024,
				RMSNormEps: 1e-6, RopeTheta: 1000000, QKNorm: true,
			}, tensor.NewGenerator(1))
		}},
	}
	for _, shape := range shapes {
		m := shape.model()
		e := newEngine(b, Config{Model: m, MaxBatch: 1, BlockSize: 16, KVCacheBytes: 64 << 20})
		_, hkv, d := m.KVShape()
		var h int
		if l, ok := m.(*nn.Llama); ok {
			h = l.Config.NumAttentionHeads
		} else {
			h = m.(*nn.GPT).Config.NHead
		}
		table := make([]int, 1024/16)
		for i := range table {
			table[i] = i
		}
		for _, c := range []struct{ pos, n int }{{0, 8}, {0, 16}, {0, 32}, {0, 64}, {64, 64}, {192, 64}, {448, 64}} {
			g := tensor.NewGenerator(3)
			q := g.Randn(c.n, h*d).Float32s()
			k, v := g.Randn(c.n, hkv*d).Float32s(), g.Randn(c.n, hkv*d).Float32s()
			batch := &nn.Batch{Tokens: make([]int, c.n), Seqs: []nn.BatchSeq{{Start: 0, Len: c.n, Pos: c.pos}}}
			out := make([]float32, c.n*h*d)
			for _, path := range []struct {
				name  string
				limit int
			}{{"host", math.MaxInt}, {"tensor", 0}} {
				b.Run(fmt.Sprintf("%s/pos=%d/n=%d/%s", shape.name, c.pos, c.n, path.name), func(b *testing.B) {
					e.hostChunk = path.limit
					for b.Loop() {
						e.attendHost(0, batch, [][]int{table}, 0, 1, q, k, v, out)
					}
					b.ReportMetric(float64(chunkWork(c.pos, c.n, h, d)), "work")
				})
			}
		}
	}
}
