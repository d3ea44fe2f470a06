package nn_test

import (
	"testing"
	"time"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// TestGPTOverfits trains a tiny GPT on one fixed sequence until it has
// memorised it.
func TestGPTOverfits(t *testing.T) {
	start := time.Now()
	tensor.ManualSeed(1)
	text := []int{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2}
	x := tensor.FromInts(text[:16], 1, 16)
	y := tensor.FromInts(text[1:], 1, 16)
	m := nn.NewGPT(nn.GPTConfig{VocabSize: 10, BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 32, Bias: true})
	opt := optim.NewAdamWGroups(optim.DecayGroups(m.Parameters(), 0.01), optim.AdamWConfig{LR: 3e-3})
	var first, last float32
	steps := 0
	for steps = 1; steps <= 300; steps++ {
		loss := m.Loss(x, y)
		last = loss.Item()
		if steps == 1 {
			first = last
		}
		if last < 0.1 {
			break
		}
		loss.Backward()
		optim.ClipGradNorm(m.Parameters(), 1)
		opt.Step()
		opt.ZeroGrad()
	}
	t.Logf("loss %.3f -> %.4f in %d steps, %v", first, last, steps, time.Since(start))
	if last >= 0.1 {
		t.Fatalf("loss %.4f after 300 steps, want < 0.1 (started at %.3f)", last, first)
	}
	// the memorised sequence comes back greedily
	m.Eval()
	out := m.Generate(tensor.FromInts(text[:1], 1, 1), 15, 1, 1).Ints()
	for i, v := range out {
		if v != text[i] {
			t.Errorf("greedy continuation %v, want %v", out, text[:16])
			break
		}
	}
}
