package main

import (
	"context"
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

// TestSampleGreedy: --temperature=0 samples the most likely token at every
// step, whatever the seed: the text of --top_k=1.
func TestSampleGreedy(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, tinyArgs(dir, "--max_iters=2", "--num_samples=0")...)
	a := mustRun(t, "sample", "--out_dir="+dir, "--temperature=0", "--seed=1", "--num_tokens=30")
	b := mustRun(t, "sample", "--out_dir="+dir, "--temperature=0", "--seed=2", "--num_tokens=30")
	c := mustRun(t, "sample", "--out_dir="+dir, "--top_k=1", "--temperature=1", "--seed=3", "--num_tokens=30")
	if a != b || a != c {
		t.Errorf("greedy samples differ:\nseed 1: %q\nseed 2: %q\ntop_k=1: %q", a, b, c)
	}
}
