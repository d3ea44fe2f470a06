package main

import (
	"testing"

	"github.com/wickml/wick/nn"
)

// TestOptimizerBetas checks that the AdamW of a run uses the betas of the
// flags as given, zero included (nanoGPT's beta1 = 0 is plain momentum-free
// AdamW, not a default), and the train command's defaults for flags that
// are not given.
func TestOptimizerBetas(t *testing.T) {
	model := nn.NewGPT(nn.GPTConfig{VocabSize: 5, BlockSize: 4, NLayer: 1, NHead: 1, NEmbd: 4})
	cases := []struct {
		args         []string
		beta1, beta2 float64
	}{
		{nil, 0.9, 0.99},
		{[]string{"--beta1=0"}, 0, 0.99},
		{[]string{"--beta2=0"}, 0.9, 0},
		{[]string{"--beta1=0", "--beta2=0.95"}, 0, 0.95},
	}
	for _, c := range cases {
		o, err := parseArgs(t, false, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		cfg := newOptimizer(model, o).Config()
		if cfg.Beta1 != c.beta1 || cfg.Beta2 != c.beta2 || cfg.Eps != 1e-8 || cfg.LR != o.LearningRate {
			t.Errorf("flags %q: AdamW config %+v, want betas (%v, %v), eps 1e-8, lr %v", c.args, cfg, c.beta1, c.beta2, o.LearningRate)
		}
	}
}
