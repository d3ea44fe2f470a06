package nn

import (
	"fmt"
	"slices"
	"testing"

	"github.com/wickml/wick/tensor"
)

// llamaCheckpointRun trains one step of a small Llama-family model, with
// LoRA adapters whose dropout masks come from a generator seeded alike in
// every run (the family itself has no dropout) or without them, and
// returns the loss and every gradient of the trained parameters.
func llamaCheckpointRun(t *testing.T, ckpt, lora bool) (float32, [][]float32) {
	t.Helper()
	cfg := LlamaConfig{ModelType: "qwen3", VocabSize: 17, HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 3,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 8, MaxPositionEmbeddings: 16, RMSNormEps: 1e-6, RopeTheta: 10000, QKVBias: true}
	m := NewLlamaWith(cfg, tensor.NewGenerator(21))
	m.ActivationCheckpointing = ckpt
	params := m.Parameters()
	if lora {
		l, err := ApplyLoRA(m, LoRAConfig{R: 2, Alpha: 4, Dropout: 0.3, TargetModules: []string{"q_proj", "v_proj", "down_proj"}, Gen: tensor.NewGenerator(22)})
		if err != nil {
			t.Fatal(err)
		}
		randomizeB(l, 23)
		params = l.Parameters()
	}
	return stepGrads(t, m, params, fmt.Sprintf("checkpointing %v, lora %v", ckpt, lora))
}

func TestLlamaCheckpointBitIdenticalGradients(t *testing.T) {
	for _, lora := range []bool{false, true} {
		l0, g0 := llamaCheckpointRun(t, false, lora)
		l1, g1 := llamaCheckpointRun(t, true, lora)
		sameStep(t, fmt.Sprintf("lora %v, with checkpointing against without", lora), l1, l0, g1, g0)
	}
}

// The adapters' dropout must change the gradients, or the comparison above
// proves nothing about replaying its masks.
func TestLlamaCheckpointDropoutMatters(t *testing.T) {
	_, a := llamaCheckpointRun(t, true, true)
	cfg := LlamaConfig{ModelType: "qwen3", VocabSize: 17, HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 3,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 8, MaxPositionEmbeddings: 16, RMSNormEps: 1e-6, RopeTheta: 10000, QKVBias: true}
	m := NewLlamaWith(cfg, tensor.NewGenerator(21))
	m.ActivationCheckpointing = true
	l, err := ApplyLoRA(m, LoRAConfig{R: 2, Alpha: 4, Dropout: 0.3, TargetModules: []string{"q_proj", "v_proj", "down_proj"}, Gen: tensor.NewGenerator(22)})
	if err != nil {
		t.Fatal(err)
	}
	randomizeB(l, 23)
	l.Eval() // no dropout
	idx := tensor.FromInts([]int{1, 5, 3, 16, 0, 2, 7, 7, 9, 11, 4, 4, 8, 1, 2, 3}, 2, 8)
	m.Loss(idx, tensor.FromInts([]int{5, 3, 16, 0, 2, 7, 7, 9, 11, 4, 4, 8, 1, 2, 3, 6}, 2, 8)).Backward()
	if slices.Equal(a[0], l.Parameters()[0].Grad().Float32s()) {
		t.Error("the adapters' dropout did not change the gradients")
	}
}

// Checkpointing does not touch generation: the cached path ignores it.
func TestLlamaCheckpointForwardEqual(t *testing.T) {
	cfg := LlamaConfig{ModelType: "llama", VocabSize: 17, HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 4, MaxPositionEmbeddings: 16, RMSNormEps: 1e-6, RopeTheta: 10000}
	m := NewLlamaWith(cfg, tensor.NewGenerator(3))
	idx := loraTokens()
	want := m.Forward(idx).Float32s()
	m.ActivationCheckpointing = true
	if got := m.Forward(idx).Float32s(); !slices.Equal(got, want) {
		t.Error("checkpointed forward differs from the plain one")
	}
}
