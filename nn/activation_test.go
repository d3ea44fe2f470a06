package nn_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

func TestGELUApproximate(t *testing.T) {
	x := tensor.New([]float32{-3, -1, -0.5, 0, 0.5, 1, 3})
	for _, c := range []struct {
		g    nn.GELU
		want *tensor.Tensor
		repr string
	}{
		{nn.GELU{}, x.GELU(), "GELU(approximate='none')"},
		{nn.GELU{Approximate: "none"}, x.GELU(), "GELU(approximate='none')"},
		{nn.GELU{Approximate: "tanh"}, x.GELUTanh(), "GELU(approximate='tanh')"},
	} {
		approx.EqualTensor(t, c.repr, c.g.Forward(x), c.want, 0, 0)
		if got := c.g.String(); got != c.repr {
			t.Errorf("String() = %q, want %q", got, c.repr)
		}
	}
	// the two differ, so the choice matters
	if d := x.GELU().Sub(x.GELUTanh()).Abs().Max().Item(); d == 0 {
		t.Error("exact and tanh GELU agree everywhere on the test points")
	}
	err := tensor.Catch(func() { nn.GELU{Approximate: "fast"}.Forward(x) })
	if err == nil || !strings.Contains(err.Error(), `"fast"`) {
		t.Errorf("GELU{Approximate: \"fast\"}.Forward: got %v, want an error naming \"fast\"", err)
	}
}

func TestGPTConfigActivation(t *testing.T) {
	cfg := nn.GPTConfig{VocabSize: 11, BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 8, Activation: nn.ActGELUTanh}
	m := nn.NewGPT(cfg)
	for i, b := range m.H {
		if b.MLP.Gelu.Approximate != "tanh" {
			t.Errorf("block %d: MLP GELU %v, want the tanh approximation", i, b.MLP.Gelu)
		}
	}
	if !strings.Contains(m.String(), "GELU(approximate='tanh')") {
		t.Errorf("String() does not show the tanh GELU:\n%s", m)
	}
	cfg.Activation = nn.ActGELU
	if g := nn.NewGPT(cfg).H[0].MLP.Gelu; g.Approximate != "" {
		t.Errorf("ActGELU: MLP GELU %v, want exact", g)
	}
	cfg.Activation = "relu"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `"relu"`) {
		t.Errorf("Validate with activation relu: %v, want an error naming it", err)
	}
}

// TestGPTConfigJSON checks that configurations stored before Activation
// existed (cmd/train's checkpoints hold GPTConfig as JSON) read back as
// exact GELU, and that a zero Activation is not written.
func TestGPTConfigJSON(t *testing.T) {
	old := `{"VocabSize":65,"BlockSize":64,"NLayer":4,"NHead":4,"NEmbd":128,"Dropout":0,"Bias":false}`
	var cfg nn.GPTConfig
	if err := json.Unmarshal([]byte(old), &cfg); err != nil {
		t.Fatal(err)
	}
	want := nn.GPTConfig{VocabSize: 65, BlockSize: 64, NLayer: 4, NHead: 4, NEmbd: 128}
	if cfg != want {
		t.Errorf("old JSON read as %+v, want %+v", cfg, want)
	}
	b, _ := json.Marshal(want)
	if string(b) != old {
		t.Errorf("zero Activation written as %s, want %s", b, old)
	}
	want.Activation = nn.ActGELUTanh
	b, _ = json.Marshal(want)
	var back nn.GPTConfig
	if err := json.Unmarshal(b, &back); err != nil || back != want || !strings.Contains(string(b), `"Activation":"gelu_new"`) {
		t.Errorf("round trip of %+v through %s: %+v, %v", want, b, back, err)
	}
}
