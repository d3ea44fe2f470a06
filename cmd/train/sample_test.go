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
