package nn

import (
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestModelsAdviseHugePages checks that every way nn makes a model's
// weights — NewGPTWith, NewLlamaWith, the loaders' zero models in float32
// and bfloat16, ToDType — asks for huge pages under all of its parameters.
func TestModelsAdviseHugePages(t *testing.T) {
	var got []*tensor.Tensor
	calls := 0
	defer func(f func(...*tensor.Tensor) int64) { hugePages = f }(hugePages)
	hugePages = func(ts ...*tensor.Tensor) int64 {
		calls++
		got = ts
		return tensor.HugePages(ts...)
	}
	gpt := GPTConfig{VocabSize: 37, BlockSize: 24, NLayer: 2, NHead: 3, NEmbd: 21, Bias: true}
	llama := LlamaConfig{ModelType: "qwen3", VocabSize: 29, HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 6, MaxPositionEmbeddings: 16,
		RMSNormEps: 1e-6, RopeTheta: 10000, QKVBias: true, QKNorm: true}
	for _, c := range []struct {
		name  string
		build func() Module
	}{
		{"NewGPTWith", func() Module { return NewGPTWith(gpt, tensor.NewGenerator(1)) }},
		{"newGPTZeros bfloat16", func() Module { return newGPTZeros(gpt, tensor.BFloat16) }},
		{"NewLlamaWith", func() Module { return NewLlamaWith(llama, tensor.NewGenerator(1)) }},
		{"newLlamaZeros bfloat16", func() Module { return newLlamaZeros(llama, tensor.BFloat16) }},
		{"ToDType", func() Module {
			m := NewLlamaWith(llama, tensor.NewGenerator(1))
			ToDType(m, tensor.BFloat16)
			return m
		}},
	} {
		calls, got = 0, nil
		m := c.build()
		if calls == 0 {
			t.Errorf("%s: no call to tensor.HugePages", c.name)
			continue
		}
		params := m.Parameters()
		if len(got) != len(params) {
			t.Errorf("%s: the last call advised %d tensors, want the model's %d parameters", c.name, len(got), len(params))
			continue
		}
		for i := range params {
			if got[i] != params[i] {
				t.Errorf("%s: tensor %d advised is not the model's parameter %d", c.name, i, i)
				break
			}
		}
	}
	// a ToDType that converts nothing makes no new storage to advise
	m := NewLlamaWith(llama, tensor.NewGenerator(1))
	calls = 0
	ToDType(m, tensor.Float32)
	if calls != 0 {
		t.Errorf("ToDType to the model's own dtype called tensor.HugePages %d times, want 0", calls)
	}
}
