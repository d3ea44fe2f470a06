package nn

import (
	"math"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// TestLlamaDecodeFused checks that ForwardCached's fused decoding step
// (under NoGrad) gives the eager step's bits (grad mode on, which takes
// the eager ops), logits and cache, step after step: multi-head,
// grouped-query and multi-query attention, biases, Qwen3's q/k norms, rows
// that are not a multiple of four and weights large enough that the
// products split over the pool.
func TestLlamaDecodeFused(t *testing.T) {
	small := LlamaConfig{ModelType: "qwen3", VocabSize: 29, HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 6, MaxPositionEmbeddings: 16,
		RMSNormEps: 1e-6, RopeTheta: 10000, QKVBias: true, QKNorm: true}
	wide := LlamaConfig{ModelType: "llama", VocabSize: 301, HiddenSize: 64, IntermediateSize: 200, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 16, MaxPositionEmbeddings: 16,
		RMSNormEps: 1e-5, RopeTheta: 100000, TieWordEmbeddings: true}
	mqa := wide
	mqa.NumKeyValueHeads, mqa.OBias, mqa.MLPBias, mqa.TieWordEmbeddings = 1, true, true, false
	mha := wide
	mha.NumKeyValueHeads, mha.QKVBias = 4, true
	for name, cfg := range map[string]LlamaConfig{"qwen3": small, "gqa": wide, "mqa": mqa, "mha": mha} {
		m := NewLlamaWith(cfg, tensor.NewGenerator(21))
		// non-trivial norm weights and biases
		autograd.NoGrad(func() {
			for _, p := range m.Parameters() {
				if p.Dim() == 1 {
					p.CopyFrom(p.Add(tensor.NewGenerator(uint64(p.Numel())).Randn(p.Shape()...).MulScalar(0.1)))
				}
			}
		})
		prompt := tensor.FromInts([]int{1, 7, 3, 20, 5}, 1, 5)
		fused, eager := m.NewKVCache(1, 12), m.NewKVCache(1, 12)
		autograd.NoGrad(func() { m.ForwardCached(prompt, fused) })
		m.ForwardCached(prompt, eager)
		tok := 9
		for step := range 7 {
			idx := tensor.FromInts([]int{tok}, 1, 1)
			var got *tensor.Tensor
			autograd.NoGrad(func() {
				f, ok := m.fusedDecode(fused)
				if !ok {
					t.Fatalf("%s: the fused step does not take a float32 model", name)
				}
				got = m.decodeFused(f, tok, fused.Len)
				fused.Len++
			})
			want := m.ForwardCached(idx, eager)
			g, w := got.Float32s(), want.Float32s()
			if len(g) != len(w) {
				t.Fatalf("%s step %d: %d logits, want %d", name, step, len(g), len(w))
			}
			for i := range g {
				if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
					t.Fatalf("%s step %d: logit %d is %v, eager %v", name, step, i, g[i], w[i])
				}
			}
			for l := range m.Layers {
				for _, kv := range [][2]*tensor.Tensor{{fused.K[l], eager.K[l]}, {fused.V[l], eager.V[l]}} {
					a, b := kv[0].Float32s(), kv[1].Float32s()
					for i := range a {
						if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
							t.Fatalf("%s step %d: layer %d cache element %d is %v, eager %v", name, step, l, i, a[i], b[i])
						}
					}
				}
			}
			tok = (tok*7 + 3) % cfg.VocabSize
		}
	}
}

// TestLlamaDecodeFusedTaken checks that Generate's steps take the fused
// path for a float32 model on the CPU, and not for a bfloat16 one.
func TestLlamaDecodeFusedTaken(t *testing.T) {
	cfg := LlamaConfig{ModelType: "llama", VocabSize: 29, HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 1,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 4, MaxPositionEmbeddings: 16, RMSNormEps: 1e-6, RopeTheta: 10000}
	m := NewLlamaWith(cfg, tensor.NewGenerator(3))
	c := m.NewKVCache(1, 4)
	autograd.NoGrad(func() {
		if _, ok := m.fusedDecode(c); !ok {
			t.Error("float32 model: no fused step")
		}
	})
	if _, ok := m.fusedDecode(c); ok {
		t.Error("grad mode on: the fused step would record nothing")
	}
	autograd.NoGrad(func() {
		tensor.Autocast(tensor.BFloat16, func() {
			if _, ok := m.fusedDecode(c); ok {
				t.Error("inside an autocast region: fused step")
			}
		})
	})
}
