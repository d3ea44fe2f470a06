package nn_test

import (
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

func TestGPTNamedParametersMatchNanoGPT(t *testing.T) {
	for _, bias := range []bool{true, false} {
		tag := map[bool]string{true: "bias", false: "nobias"}[bias]
		_, meta, err := nn.LoadStateDictFile(filepath.Join("..", "testdata", "nn", "gpt_"+tag+"_golden.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		if err := json.Unmarshal([]byte(meta["named_parameters"]), &want); err != nil {
			t.Fatal(err)
		}
		m := nn.NewGPT(nn.GPTConfig{VocabSize: 65, BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 32, Bias: bias})
		var got []string
		for _, p := range m.NamedParameters() {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: names\n%v\nwant (PyTorch's named_parameters)\n%v", tag, got, want)
		}
		if n, _ := strconv.Atoi(meta["num_params"]); nn.NumParams(m) != n {
			t.Errorf("%s: %d parameters, PyTorch counts %d", tag, nn.NumParams(m), n)
		}
		if len(m.Parameters()) != len(want) {
			t.Errorf("%s: Parameters has %d tensors, want %d", tag, len(m.Parameters()), len(want))
		}
	}
}

func stats(t *tensor.Tensor) (mean, std float64) {
	v := t.Float32s()
	for _, x := range v {
		mean += float64(x)
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (float64(x) - mean) * (float64(x) - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)))
}

func TestGPTInitialisation(t *testing.T) {
	tensor.ManualSeed(1)
	cfg := nn.GPTConfig{VocabSize: 100, BlockSize: 32, NLayer: 3, NHead: 2, NEmbd: 64, Bias: true}
	m := nn.NewGPT(cfg)
	projStd := 0.02 / math.Sqrt(6)
	for _, p := range m.NamedParameters() {
		mean, std := stats(p.Param)
		switch {
		case strings.HasSuffix(p.Name, "c_proj.weight"):
			if math.Abs(std-projStd) > 0.1*projStd || math.Abs(mean) > 0.1*projStd {
				t.Errorf("%s: mean %.4g std %.4g, want 0 and %.4g", p.Name, mean, std, projStd)
			}
		case strings.Contains(p.Name, "ln_") && strings.HasSuffix(p.Name, "weight"):
			if mean != 1 || std != 0 {
				t.Errorf("%s: not all ones", p.Name)
			}
		case strings.HasSuffix(p.Name, "bias"):
			if mean != 0 || std != 0 {
				t.Errorf("%s: not all zeros", p.Name)
			}
		default:
			if math.Abs(std-0.02) > 0.002 || math.Abs(mean) > 0.002 {
				t.Errorf("%s: mean %.4g std %.4g, want 0 and 0.02", p.Name, mean, std)
			}
		}
		if !p.Param.IsRequiringGrad() {
			t.Errorf("%s does not require a gradient", p.Name)
		}
	}
	if m.LmHead.Weight != m.Wte.Weight {
		t.Error("lm_head.weight is not tied to wte")
	}
}

func TestLinearInitLikePyTorch(t *testing.T) {
	tensor.ManualSeed(2)
	l := nn.NewLinear(25, 400, true)
	if !slices.Equal(l.Weight.Shape(), []int{400, 25}) || !slices.Equal(l.Bias.Shape(), []int{400}) {
		t.Fatalf("shapes %v %v, want [400 25] [400]", l.Weight.Shape(), l.Bias.Shape())
	}
	for _, p := range l.Parameters() {
		lo, hi := p.Min().Item(), p.Max().Item()
		// uniform in ±1/√25 = ±0.2: the extremes come close to the bounds
		if lo < -0.2 || hi > 0.2 || lo > -0.19 || hi < 0.19 {
			t.Errorf("values in [%v, %v], want uniform in [-0.2, 0.2]", lo, hi)
		}
	}
	if y := l.Forward(tensor.Zeros(3, 25)); !slices.Equal(y.Shape(), []int{3, 400}) {
		t.Errorf("output shape %v", y.Shape())
	}
	if err := tensor.Catch(func() { l.Forward(tensor.Zeros(3, 24)) }); err == nil || !strings.Contains(err.Error(), "[3 24]") {
		t.Errorf("wrong input width: %v", err)
	}
}

func TestDropoutTrainEval(t *testing.T) {
	tensor.ManualSeed(3)
	cfg := nn.GPTConfig{VocabSize: 9, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8, Dropout: 0.5, Bias: true}
	m := nn.NewGPT(cfg)
	plain := cfg
	plain.Dropout = 0
	ref := nn.NewGPT(plain)
	if err := nn.LoadStateDict(ref, nn.StateDictOf(m)); err != nil {
		t.Fatal(err)
	}
	idx := tensor.FromInts([]int{1, 2, 3, 4, 5}, 1, 5)
	// training: dropout (also on the attention weights) makes runs differ
	a, b := m.Forward(idx).Float32s(), m.Forward(idx).Float32s()
	if slices.Equal(a, b) {
		t.Error("two training forwards with dropout 0.5 agree")
	}
	m.Loss(idx, idx).Backward() // the dropout path differentiates
	if m.H[0].Attn.CAttn.Weight.Grad() == nil {
		t.Error("no gradient through the attention dropout path")
	}
	m.Eval()
	if got, want := m.Forward(idx).Float32s(), ref.Forward(idx).Float32s(); !slices.Equal(got, want) {
		t.Error("evaluation mode does not switch dropout off")
	}
	m.Train()
	if !m.Drop.Training || !m.H[0].MLP.Drop.Training || !m.H[0].Attn.AttnDropout.Training {
		t.Error("Train did not reach every dropout")
	}
}

func TestGPTPanicsOnBadInput(t *testing.T) {
	m := nn.NewGPT(nn.GPTConfig{VocabSize: 9, BlockSize: 4, NLayer: 1, NHead: 1, NEmbd: 4})
	for name, f := range map[string]func(){
		"too long": func() { m.Forward(tensor.FromInts([]int{1, 2, 3, 4, 5}, 1, 5)) },
		"float":    func() { m.Forward(tensor.Zeros(1, 3)) },
		"1-D":      func() { m.Forward(tensor.FromInts([]int{1, 2})) },
	} {
		if err := tensor.Catch(f); err == nil {
			t.Errorf("%s: no panic", name)
		}
	}
	if err := (nn.GPTConfig{VocabSize: 9, BlockSize: 4, NLayer: 1, NHead: 3, NEmbd: 4}).Validate(); err == nil || !strings.Contains(err.Error(), "multiple of n_head") {
		t.Errorf("Validate: %v", err)
	}
}

func TestGenerateCropsAndSamples(t *testing.T) {
	tensor.ManualSeed(4)
	m := nn.NewGPT(nn.GPTConfig{VocabSize: 9, BlockSize: 4, NLayer: 1, NHead: 1, NEmbd: 4})
	m.Eval()
	out := m.Generate(tensor.FromInts([]int{1, 2, 3, 4, 5, 6, 7, 8, 0, 1}, 2, 5), 6, 1.0, 3)
	if !slices.Equal(out.Shape(), []int{2, 11}) {
		t.Fatalf("shape %v, want [2 11]", out.Shape())
	}
	if got := out.Slice(1, 0, 5).Ints(); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6, 7, 8, 0, 1}) {
		t.Errorf("prompt changed: %v", got)
	}
	for _, v := range out.Ints() {
		if v < 0 || v >= 9 {
			t.Errorf("token %d out of range", v)
		}
	}
}

func TestParamsHTML(t *testing.T) {
	m := nn.NewGPT(nn.GPTConfig{VocabSize: 9, BlockSize: 4, NLayer: 1, NHead: 1, NEmbd: 4, Bias: true})
	h := m.HTML()
	for _, want := range []string{"<table", "transformer.wte.weight", "<td>[9 4]</td>", "transformer.h.0.attn.c_attn.bias", "<b>" + strconv.Itoa(nn.NumParams(m)) + "</b>"} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %q:\n%s", want, h)
		}
	}
}
