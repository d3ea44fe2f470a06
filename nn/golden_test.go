package nn_test

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

// The goldens come from scripts/gen_golden_nn.py (PyTorch 1.13).

func readGolden(t *testing.T, name string) nn.StateDict {
	t.Helper()
	sd, _, err := nn.LoadStateDictFile(filepath.Join("..", "testdata", "nn", name))
	if err != nil {
		t.Fatal(err)
	}
	return sd
}

func get(t *testing.T, sd nn.StateDict, name string) *tensor.Tensor {
	t.Helper()
	v, ok := sd[name]
	if !ok {
		t.Fatalf("golden tensor %q missing", name)
	}
	return v
}

type forwarder interface {
	nn.Module
	Forward(*tensor.Tensor) *tensor.Tensor
}

func TestModuleGoldens(t *testing.T) {
	sd := readGolden(t, "modules.safetensors")
	cases := []struct {
		name string
		m    forwarder
	}{
		{"linear", nn.NewLinear(5, 7, true)},
		{"linear_nobias", nn.NewLinear(5, 7, false)},
		{"embedding", nn.NewEmbedding(10, 4)},
		{"layernorm", nn.NewLayerNorm(6, true)},
		{"layernorm_nobias", nn.NewLayerNorm(6, false)},
		{"attention", nn.NewCausalSelfAttention(nn.GPTConfig{NEmbd: 32, NHead: 2, BlockSize: 16, Bias: true})},
		{"block", nn.NewBlock(nn.GPTConfig{NEmbd: 32, NHead: 4, BlockSize: 16, Bias: false})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := nn.LoadStateDict(c.m, sd.WithPrefix(c.name+".param.")); err != nil {
				t.Fatal(err)
			}
			x := get(t, sd, c.name+".x")
			if x.DType() == tensor.Float32 {
				x = x.Clone().RequiresGrad()
			}
			y := c.m.Forward(x)
			approx.EqualTensor(t, "y", y, get(t, sd, c.name+".y"), 1e-4, 1e-6)
			y.Mul(get(t, sd, c.name+".g")).Sum().Backward()
			for _, p := range c.m.NamedParameters() {
				approx.EqualTensor(t, "grad "+p.Name, p.Param.Grad(), get(t, sd, c.name+".grad."+p.Name), 1e-4, 1e-5)
			}
			if x.DType() == tensor.Float32 {
				approx.EqualTensor(t, "grad x", x.Grad(), get(t, sd, c.name+".grad_x"), 1e-4, 1e-8)
			}
		})
	}
}

func TestGPTGoldens(t *testing.T) {
	for _, bias := range []bool{true, false} {
		tag := map[bool]string{true: "bias", false: "nobias"}[bias]
		t.Run(tag, func(t *testing.T) {
			cfg := nn.GPTConfig{VocabSize: 65, BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 32, Bias: bias}
			m := nn.NewGPT(cfg)
			if err := nn.LoadFile(filepath.Join("..", "testdata", "nn", "gpt_"+tag+".safetensors"), m); err != nil {
				t.Fatal(err)
			}
			g := readGolden(t, "gpt_"+tag+"_golden.safetensors")
			logits, loss := m.ForwardLoss(get(t, g, "idx"), get(t, g, "targets"))
			approx.EqualTensor(t, "logits", logits, get(t, g, "logits"), 1e-4, 1e-6)
			approx.EqualTensor(t, "loss", loss, get(t, g, "loss"), 1e-4, 1e-8)
			loss.Backward()
			n := 0
			for _, p := range m.NamedParameters() {
				// The parameters' gradients span four orders of magnitude, so
				// the absolute tolerance follows each one's largest element.
				want := get(t, g, "grad."+p.Name)
				approx.EqualTensor(t, "grad "+p.Name, p.Param.Grad(), want, 1e-4, 1e-5*maxAbs(want))
				n++
			}
			if want := len(g.WithPrefix("grad.")); n != want {
				t.Errorf("model has %d parameters, PyTorch's has %d", n, want)
			}
			// greedy generation (top_k = 1) is deterministic
			m.Eval()
			out := m.Generate(get(t, g, "gen.prompt"), 20, 0.8, 1)
			if got, want := out.Ints(), get(t, g, "gen.out").Ints(); !slices.Equal(got, want) {
				t.Errorf("Generate = %v\nwant       %v", got, want)
			}
		})
	}
}

func TestGPTLossMatchesForward(t *testing.T) {
	tensor.ManualSeed(3)
	m := nn.NewGPT(nn.GPTConfig{VocabSize: 11, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8})
	idx := tensor.RandInt(0, 11, 2, 5)
	tgt := tensor.RandInt(0, 11, 2, 5)
	want := tensor.CrossEntropy(m.Forward(idx).Reshape(-1, 11), tgt.Reshape(-1)).Item()
	if got := m.Loss(idx, tgt).Item(); got != want {
		t.Errorf("Loss = %v, want %v", got, want)
	}
}

// maxAbs returns the largest magnitude among x's elements.
func maxAbs(x *tensor.Tensor) float64 {
	m := 0.0
	for _, v := range x.Float32s() {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return m
}
