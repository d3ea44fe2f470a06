//go:build cuda

package cuda

import (
	"slices"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// TestGenerateMatchesCPU generates greedily (top_k 1) with the key/value
// cache on the GPU and on the CPU, from the same weights, for a batch of
// two prompts shorter than the block and one past it (the generations
// cross block_size): the tokens must be the same.
func TestGenerateMatchesCPU(t *testing.T) {
	gpu(t)
	run := func(dev tensor.Device, plen int) (toks []int) {
		onDevice(t, dev, 21, func() {
			cfg := nn.GPTConfig{VocabSize: 41, BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 32, Bias: true}
			model := nn.NewGPT(cfg)
			model.Eval()
			prompt := tensor.RandInt(0, cfg.VocabSize, 2, plen)
			out := model.GenerateWith(prompt, 12, 1, 1, tensor.NewGenerator(5))
			if out.Device() != dev {
				t.Errorf("Generate on %v returned tokens on %v", dev, out.Device())
			}
			toks = out.Ints()
		})
		return toks
	}
	for _, plen := range []int{3, 10} {
		g, c := run(tensor.CUDA(0), plen), run(tensor.CPU, plen)
		if !slices.Equal(g, c) {
			t.Errorf("prompt length %d: GPU generated %v\nCPU generated %v", plen, g, c)
		}
	}
}
