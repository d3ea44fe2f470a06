package nn

import (
	"fmt"
	"slices"
	"testing"

	"github.com/wickml/wick/tensor"
)

// checkpointRun trains one step of a small GPT with dropout on, its
// dropout masks from a generator seeded alike in every run, and returns
// the loss and every gradient (adapters' too, when lora).
func checkpointRun(t *testing.T, ckpt, lora bool) (float32, [][]float32) {
	t.Helper()
	cfg := GPTConfig{VocabSize: 17, BlockSize: 8, NLayer: 3, NHead: 2, NEmbd: 16, Dropout: 0.2, Bias: true}
	g := NewGPTWith(cfg, tensor.NewGenerator(11))
	g.ActivationCheckpointing = ckpt
	params := g.Parameters()
	if lora {
		l, err := ApplyLoRA(g, LoRAConfig{R: 2, Alpha: 4, Dropout: 0.3, TargetModules: []string{"c_attn", "c_fc"}, Gen: tensor.NewGenerator(12)})
		if err != nil {
			t.Fatal(err)
		}
		randomizeB(l, 13)
		params = l.Parameters()
	}
	return stepGrads(t, g, params, fmt.Sprintf("checkpointing %v, lora %v", ckpt, lora))
}

func TestCheckpointBitIdenticalGradients(t *testing.T) {
	for _, lora := range []bool{false, true} {
		l0, g0 := checkpointRun(t, false, lora)
		l1, g1 := checkpointRun(t, true, lora)
		sameStep(t, fmt.Sprintf("lora %v, with checkpointing against without", lora), l1, l0, g1, g0)
	}
}

// The dropout masks depend on the generator: a run with another seed must
// differ, or the comparison above proves nothing.
func TestCheckpointDropoutMatters(t *testing.T) {
	_, a := checkpointRun(t, true, false)
	cfg := GPTConfig{VocabSize: 17, BlockSize: 8, NLayer: 3, NHead: 2, NEmbd: 16, Dropout: 0.2, Bias: true}
	g := NewGPTWith(cfg, tensor.NewGenerator(11))
	g.SetDropout(0)
	g.ActivationCheckpointing = true
	idx := tensor.FromInts([]int{1, 5, 3, 16, 0, 2, 7, 7, 9, 11, 4, 4, 8, 1, 2, 3}, 2, 8)
	g.Loss(idx, tensor.FromInts([]int{5, 3, 16, 0, 2, 7, 7, 9, 11, 4, 4, 8, 1, 2, 3, 6}, 2, 8)).Backward()
	if slices.Equal(a[len(a)-1], g.Parameters()[len(a)-1].Grad().Float32s()) {
		t.Error("dropout did not change the gradients")
	}
}
