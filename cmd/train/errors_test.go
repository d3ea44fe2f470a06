package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// TestSeveralProblems checks how an error that lists several problems
// prints: the first on the "train: " line, each other once on an indented
// line below it. The checkpoint's config has two layers whose tensors the
// file lacks.
func TestSeveralProblems(t *testing.T) {
	dir := t.TempDir()
	tok := tokenizer.NewChar([]byte("abcdefgh"))
	cfg := nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 8}
	tensor.ManualSeed(1)
	sd := nn.StateDictOf(nn.NewGPT(cfg))
	for name := range sd {
		if strings.HasPrefix(name, "transformer.h.") {
			delete(sd, name)
		}
	}
	js, err := tok.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	meta, err := json.Marshal(map[string]any{"iter": 1, "model_args": cfg, "tokenizer": json.RawMessage(js), "config": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ckptName)
	if err := nn.SaveStateDictFile(path, sd, map[string]string{nn.MetaFormat: nn.TrainCheckpointFormat, nn.MetaTrain: string(meta)}); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "sample", "--out_dir="+dir, "--num_tokens=2")
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	want := []string{
		"train: checkpoint " + path + ` is corrupt: tensor "transformer.h.0.attn.c_attn.weight": missing tensor (model_args need shape [24 8])`,
		"\t" + `tensor "transformer.h.1.attn.c_attn.weight": missing tensor (model_args need shape [24 8])`,
	}
	if code != 1 || strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and:\n%s", code, stderr, strings.Join(want, "\n"))
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
}

// TestErrorText checks the formatting of error messages for stderr.
func TestErrorText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"one", "one"},
		{"  one\n", "one"},
		{"first: a\n\tb\n\t\tc\n\n\tb", "first: a\n\tb\n\tc"},
	} {
		if got := errorText(c.in); got != c.want {
			t.Errorf("errorText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
