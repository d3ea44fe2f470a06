package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// TestTrainThenLoadCheckpoint trains with the CLI, loads the checkpoint
// with one call, nn.LoadCheckpoint, and checks that generating with the
// seed that train sample is given draws the text train sample prints.
func TestTrainThenLoadCheckpoint(t *testing.T) {
	for _, kind := range []string{"char", "bpe"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			mustRun(t, tinyArgs(dir, "--max_iters=15", "--eval_interval=5", "--tokenizer="+kind, "--vocab_size=300")...)
			prompt := "The river"
			sample := mustRun(t, "sample", "--out_dir="+dir, "--prompt="+prompt, "--seed=42", "--num_samples=2", "--num_tokens=25", "--temperature=0.9", "--top_k=20")

			ck, err := nn.LoadCheckpoint(filepath.Join(dir, ckptName))
			if err != nil {
				t.Fatal(err)
			}
			if ck.Tokenizer.Kind() != kind || ck.Iter != 15 || ck.Config.NLayer != 1 || ck.Config.NEmbd != 16 {
				t.Errorf("checkpoint: tokenizer %s, iter %d, config %+v", ck.Tokenizer.Kind(), ck.Iter, ck.Config)
			}
			ids, err := tokenizer.EncodeStrict(ck.Tokenizer, prompt)
			if err != nil {
				t.Fatal(err)
			}
			tensor.ManualSeed(42)
			rows := append(slices.Clone(ids), ids...)
			out := ck.Model.Generate(tensor.FromInts(rows, 2, len(ids)), 25, 0.9, 20)
			n := out.Size(1)
			want := ck.Tokenizer.Decode(out.Ints()[:n]) + "\n---------------\n" + ck.Tokenizer.Decode(out.Ints()[n:]) + "\n"
			if sample != want {
				t.Errorf("train sample printed\n%q\nLoadCheckpoint's model generated\n%q", sample, want)
			}
			if !strings.HasPrefix(sample, prompt) {
				t.Errorf("sample %q does not start with the prompt", sample)
			}
		})
	}
}
