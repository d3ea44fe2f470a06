package serve

import (
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
