package nn

import (
	"math"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// checkDecodeFused checks that m's fused decoding step (ForwardCached
// under NoGrad, where taken reports that it runs) gives the eager step's
// bits (grad mode on, which takes the eager ops), logits and cache, for
// seven steps after prompt (none: the first step is at position 0).
func checkDecodeFused(t *testing.T, name string, m CausalLM, prompt []int, taken func(*KVCache) bool) {
	t.Helper()
	fused, eager := m.NewKVCache(1, 12), m.NewKVCache(1, 12)
	if len(prompt) > 0 {
		idx := tensor.FromInts(prompt, 1, len(prompt))
		autograd.NoGrad(func() { m.ForwardCached(idx, fused) })
		m.ForwardCached(idx, eager)
	}
	tok := 9
	for step := range 7 {
		idx := tensor.FromInts([]int{tok}, 1, 1)
		var got *tensor.Tensor
		autograd.NoGrad(func() {
			if !taken(fused) {
				t.Fatalf("%s step %d: no fused step", name, step)
			}
			got = m.ForwardCached(idx, fused)
		})
		want := m.ForwardCached(idx, eager)
		g, w := got.Float32s(), want.Float32s()
		if len(g) != len(w) || fused.Len != eager.Len {
			t.Fatalf("%s step %d: %d logits and %d cached, want %d and %d", name, step, len(g), fused.Len, len(w), eager.Len)
		}
		for i := range g {
			if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
				t.Fatalf("%s step %d: logit %d is %v, eager %v", name, step, i, g[i], w[i])
			}
		}
		for l := range fused.K {
			for _, kv := range [][2]*tensor.Tensor{{fused.K[l], eager.K[l]}, {fused.V[l], eager.V[l]}} {
				a, b := kv[0].Float32s(), kv[1].Float32s()
				for i := range a {
					if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
						t.Fatalf("%s step %d: layer %d cache element %d is %v, eager %v", name, step, l, i, a[i], b[i])
					}
				}
			}
		}
		tok = (tok*7 + 3) % m.VocabSize()
	}
}

// perturbVectors gives m's vector parameters (norm weights, biases)
// non-trivial values.
func perturbVectors(m Module) {
	autograd.NoGrad(func() {
		for _, p := range m.Parameters() {
			if p.Dim() == 1 {
				p.CopyFrom(p.Add(tensor.NewGenerator(uint64(p.Numel())).Randn(p.Shape()...).MulScalar(0.1)))
			}
		}
	})
}

// TestLlamaDecodeFused checks that ForwardCached's fused decoding step
// gives the eager step's bits, step after step (checkDecodeFused):
// multi-head, grouped-query and multi-query attention, biases, Qwen3's q/k
// norms, rows that are not a multiple of four and weights large enough
// that the products split over the pool, in float32 and with bfloat16
// weights.
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
		for _, dt := range []tensor.DType{tensor.Float32, tensor.BFloat16} {
			m := NewLlamaWith(cfg, tensor.NewGenerator(21))
			perturbVectors(m)
			ToDType(m, dt)
			taken := func(c *KVCache) bool {
				_, ok := m.fusedDecode(c, new(llamaScratch))
				return ok
			}
			checkDecodeFused(t, name+" "+dt.String(), m, []int{1, 7, 3, 20, 5}, taken)
		}
	}
}

// TestLlamaDecodeFusedTaken checks that Generate's steps take the fused
// path for a float32 or bfloat16 model on the CPU, and not for a float16
// one, in grad mode or inside an autocast region.
func TestLlamaDecodeFusedTaken(t *testing.T) {
	cfg := LlamaConfig{ModelType: "llama", VocabSize: 29, HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 1,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 4, MaxPositionEmbeddings: 16, RMSNormEps: 1e-6, RopeTheta: 10000}
	m := NewLlamaWith(cfg, tensor.NewGenerator(3))
	c := m.NewKVCache(1, 4)
	taken := func() bool {
		_, ok := m.fusedDecode(c, new(llamaScratch))
		return ok
	}
	autograd.NoGrad(func() {
		if !taken() {
			t.Error("float32 model: no fused step")
		}
	})
	if taken() {
		t.Error("grad mode on: the fused step would record nothing")
	}
	autograd.NoGrad(func() {
		tensor.Autocast(tensor.BFloat16, func() {
			if taken() {
				t.Error("inside an autocast region: fused step")
			}
		})
	})
	ToDType(m, tensor.BFloat16)
	autograd.NoGrad(func() {
		if !taken() {
			t.Error("bfloat16 model: no fused step")
		}
	})
	ToDType(m, tensor.Float16)
	autograd.NoGrad(func() {
		if taken() {
			t.Error("float16 model: fused step")
		}
	})
}
