package nn_test

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// The Llama-family goldens come from scripts/gen_golden_llama.py: small
// random models in the hub's layout with PyTorch's logits, gradients and
// greedy tokens from a transcription of transformers' modeling code.

var llamaVariants = []string{"llama_gqa", "llama3_mqa_bf16", "llama_linear_f16_sharded", "qwen2", "qwen3", "mistral"}

func llamaDir(name string) string { return filepath.Join("..", "testdata", "llama", name) }

// maxDiff returns the largest |got−want| / (1+|want|) of two tensors of
// one shape.
func maxDiff(t *testing.T, what string, got, want *tensor.Tensor) float64 {
	t.Helper()
	if !slices.Equal(got.Shape(), want.Shape()) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), want.Shape())
	}
	g, w := got.Float32s(), want.Float32s()
	worst := 0.0
	for i := range g {
		d := math.Abs(float64(g[i])-float64(w[i])) / (1 + math.Abs(float64(w[i])))
		if !(d <= worst) {
			worst = d
		}
	}
	return worst
}

func TestLlamaGoldens(t *testing.T) {
	for _, name := range llamaVariants {
		t.Run(name, func(t *testing.T) {
			m, err := nn.LoadCausalLM(llamaDir(name))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := m.(*nn.Llama); !ok {
				t.Fatalf("LoadCausalLM returned %T, want *nn.Llama", m)
			}
			sd, _, err := nn.LoadStateDictFile(filepath.Join(llamaDir(name), "golden.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			idx, targets := get(t, sd, "idx"), get(t, sd, "targets")
			if d := maxDiff(t, "logits", m.Forward(idx), get(t, sd, "logits")); d > 1e-4 {
				t.Errorf("logits differ from PyTorch's by %.3g (relative to 1+|x|), want ≤ 1e-4", d)
			} else {
				t.Logf("logits: max difference %.2g", d)
			}
			loss := m.Loss(idx, targets)
			if d := maxDiff(t, "loss", loss, get(t, sd, "loss")); d > 1e-4 {
				t.Errorf("loss %v, PyTorch's %v", loss.Item(), get(t, sd, "loss").Item())
			}
			loss.Backward()
			worst := 0.0
			for _, p := range m.NamedParameters() {
				g := p.Param.Grad()
				if g == nil {
					t.Fatalf("%s: no gradient", p.Name)
				}
				d := maxDiff(t, p.Name, g, get(t, sd, "grad."+p.Name))
				if d > 1e-4 {
					t.Errorf("gradient of %s differs from PyTorch's by %.3g, want ≤ 1e-4", p.Name, d)
				}
				worst = max(worst, d)
			}
			t.Logf("gradients of %d parameters: max difference %.2g", len(m.NamedParameters()), worst)
			if len(sd.WithPrefix("grad.")) != len(m.NamedParameters()) {
				t.Errorf("the golden has %d gradients, the model %d parameters", len(sd.WithPrefix("grad.")), len(m.NamedParameters()))
			}

			m.Eval()
			out, err := nn.Generate(m, get(t, sd, "prompt"), nn.GenerateOptions{MaxNewTokens: 12, IgnoreEOS: true})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := out.Ints(), get(t, sd, "greedy").Ints(); !slices.Equal(got, want) {
				t.Errorf("greedy tokens %v, PyTorch's %v", got, want)
			}
		})
	}
}
