package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// TestGenerateStoppable checks that generate, which can be stopped between
// two tokens, draws the tokens that one Generate call draws, and that a
// cancelled context stops it.
func TestGenerateStoppable(t *testing.T) {
	text := []byte("the quick brown fox jumps over the lazy dog\n")
	tok := tokenizer.NewChar(text)
	tensor.ManualSeed(7)
	model := nn.NewGPT(nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8})
	o := defaultOptions()
	o.Prompt, o.NumTokens, o.NumSamples, o.TopK = "the", 20, 3, 5

	tensor.ManualSeed(11)
	got, err := generate(context.Background(), model, tok, o)
	if err != nil {
		t.Fatal(err)
	}
	tensor.ManualSeed(11)
	ids := tok.Encode("the")
	rows := append(append(ids, ids...), ids...)
	model.Eval()
	out := model.Generate(tensor.FromInts(rows, 3, 3), 20, float32(o.Temperature), o.TopK)
	model.Train()
	n := out.Size(1)
	var want []string
	for i := range 3 {
		want = append(want, tok.Decode(out.Ints()[i*n:(i+1)*n]))
	}
	if w := strings.Join(want, "\n---------------\n"); got != w {
		t.Errorf("generate:\n%s\nGenerate:\n%s", got, w)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := generate(ctx, model, tok, o); err == nil {
		t.Error("generate ran on a cancelled context")
	}
}

// TestGreedyTemperature: --temperature=0 is greedy decoding, the tokens of
// --top_k=1 whatever the seed, in train sample and in the sample printed at
// the end of training.
func TestGreedyTemperature(t *testing.T) {
	readSample := func(dir string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "sample.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	greedy, topK1 := t.TempDir(), t.TempDir()
	mustRun(t, tinyArgs(greedy, "--max_iters=6", "--eval_interval=3", "--num_samples=2", "--temperature=0")...)
	mustRun(t, tinyArgs(topK1, "--max_iters=6", "--eval_interval=3", "--num_samples=2", "--temperature=1", "--top_k=1")...)
	if a, b := readSample(greedy), readSample(topK1); a != b {
		t.Errorf("end of training: --temperature=0 sampled\n%q\n--top_k=1\n%q", a, b)
	}
	want := mustRun(t, "sample", "--out_dir="+greedy, "--prompt=The ", "--num_samples=2", "--num_tokens=30", "--top_k=1", "--seed=1")
	for _, seed := range []string{"--seed=1", "--seed=2"} {
		if got := mustRun(t, "sample", "--out_dir="+greedy, "--prompt=The ", "--num_samples=2", "--num_tokens=30", "--temperature=0", seed); got != want {
			t.Errorf("train sample --temperature=0 %s printed\n%q\n--top_k=1 printed\n%q", seed, got, want)
		}
	}
	if !strings.HasPrefix(want, "The ") || len(want) < 30 {
		t.Errorf("train sample printed %q", want)
	}
}
