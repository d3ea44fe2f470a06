package nn_test

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

var updateLoRA = flag.Bool("update-lora", false, "rewrite testdata/lora/wick_adapter and wick_logits.safetensors (then run scripts/gen_golden_lora.py to check them in PyTorch)")

// loraBase is the GPT of testdata/nn/gpt_bias.safetensors, which
// scripts/gen_golden_lora.py also starts from.
func loraBase(t *testing.T) *nn.GPT {
	t.Helper()
	m := nn.NewGPTWith(nn.GPTConfig{VocabSize: 65, BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 32, Bias: true}, tensor.NewGenerator(0))
	if err := nn.LoadFile(filepath.Join("..", "testdata", "nn", "gpt_bias.safetensors"), m); err != nil {
		t.Fatal(err)
	}
	return m
}

func readLoRAGolden(t *testing.T, name string) nn.StateDict {
	t.Helper()
	sd, _, err := nn.LoadStateDictFile(filepath.Join("..", "testdata", "lora", name))
	if err != nil {
		t.Fatal(err)
	}
	return sd
}

// TestLoRAPEFTGolden loads an adapter that the PyTorch transcription of
// PEFT wrote in PEFT's layout: the logits, the loss and the gradients of
// every adapter parameter after one backward pass equal PyTorch's.
func TestLoRAPEFTGolden(t *testing.T) {
	m := loraBase(t)
	l, err := nn.LoadAdapter(filepath.Join("..", "testdata", "lora", "peft_adapter"), m)
	if err != nil {
		t.Fatal(err)
	}
	g := readLoRAGolden(t, "peft_golden.safetensors")
	l.Train()
	logits, loss := m.ForwardLoss(get(t, g, "idx"), get(t, g, "targets"))
	approx.EqualTensor(t, "logits", logits, get(t, g, "logits"), 1e-4, 1e-5)
	approx.EqualTensor(t, "loss", loss, get(t, g, "loss"), 1e-4, 1e-6)
	loss.Backward()
	n := 0
	for _, p := range l.NamedParameters() {
		want := get(t, g, "grad."+p.Name)
		approx.EqualTensor(t, "grad "+p.Name, p.Param.Grad(), want, 1e-4, 1e-5*maxAbs(want))
		n++
	}
	if want := len(g.WithPrefix("grad.")); n != want || n != 8 {
		t.Errorf("%d adapter parameters, PyTorch's has %d", n, want)
	}
}

// wickAdapter builds the adapter of the committed Wick fixture: r=2,
// alpha 5 on every Linear of the attention (a regular expression), A from a
// seeded generator, B set as training would.
func wickAdapter(t *testing.T) (*nn.GPT, *nn.LoRA) {
	m := loraBase(t)
	l, err := nn.ApplyLoRA(m, nn.LoRAConfig{R: 2, Alpha: 5, TargetRegexp: `.*\.attn\.c_(attn|proj)`, Gen: tensor.NewGenerator(7), BaseModel: "testdata/nn/gpt_bias"})
	if err != nil {
		t.Fatal(err)
	}
	gen := tensor.NewGenerator(8)
	for _, p := range l.Parameters() {
		autograd.NoGrad(func() { p.NormalInitWith(0, 0.3, gen) })
	}
	l.Eval()
	return m, l
}

// TestLoRAWickFixture checks the adapter that Wick saved into
// testdata/lora/wick_adapter (which scripts/gen_golden_lora.py applies in
// PyTorch and finds Wick's logits): Wick still writes those very bytes, and
// loading them back gives the stored logits bit for bit.
func TestLoRAWickFixture(t *testing.T) {
	dir := filepath.Join("..", "testdata", "lora", "wick_adapter")
	logitsPath := filepath.Join("..", "testdata", "lora", "wick_logits.safetensors")
	m, l := wickAdapter(t)
	idx := tensor.FromInts([]int{3, 14, 15, 9, 26, 5, 35, 8, 9, 7, 9, 3, 2, 38, 4, 6}, 2, 8)
	logits := m.Forward(idx)
	if *updateLoRA {
		if err := l.SaveAdapter(dir); err != nil {
			t.Fatal(err)
		}
		if err := nn.SaveStateDictFile(logitsPath, nn.StateDict{"idx": idx, "logits": logits}, nil); err != nil {
			t.Fatal(err)
		}
	}
	fresh := t.TempDir()
	if err := l.SaveAdapter(fresh); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{nn.AdapterConfigFile, nn.AdapterWeightsFile} {
		got, err1 := os.ReadFile(filepath.Join(fresh, f))
		want, err2 := os.ReadFile(filepath.Join(dir, f))
		if err1 != nil || err2 != nil || !slices.Equal(got, want) {
			t.Errorf("%s differs from the committed fixture (%v, %v); rerun with -update-lora and scripts/gen_golden_lora.py", f, err1, err2)
		}
	}
	want := readLoRAGolden(t, "wick_logits.safetensors")
	m2 := loraBase(t)
	if _, err := nn.LoadAdapter(dir, m2); err != nil {
		t.Fatal(err)
	}
	// within the modules' tolerance, not bit for bit: the fixture's logits
	// were computed on one CPU path, and the suite runs on every path
	// (WICK_CPU=avx2, purego), whose sums round differently.
	approx.EqualTensor(t, "the fixture adapter's logits", m2.Forward(get(t, want, "idx")), get(t, want, "logits"), 1e-4, 1e-5)
	approx.EqualTensor(t, "the adapter built afresh's logits", logits, get(t, want, "logits"), 1e-4, 1e-5)
}
