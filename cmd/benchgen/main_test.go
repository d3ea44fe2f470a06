package main

import (
	"testing"

	"github.com/wickml/wick/nn"
)

// TestRunLlama runs the Llama path (generation and the bandwidth bound's
// byte count) on a tiny model, greedy and sampled.
func TestRunLlama(t *testing.T) {
	cfg := nn.LlamaConfig{ModelType: "llama", VocabSize: 40, HiddenSize: 16, IntermediateSize: 24,
		NumHiddenLayers: 2, NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 4,
		MaxPositionEmbeddings: 32, RMSNormEps: 1e-5, RopeTheta: 10000, TieWordEmbeddings: true}
	for _, temp := range []float32{0, 1} {
		if err := runLlama(cfg, "tiny", 4, 6, 8, 1, 1, temp, false); err != nil {
			t.Fatalf("temperature %v: %v", temp, err)
		}
	}
	if err := runLlama(cfg, "tiny", 30, 6, 0, 1, 1, 1, false); err == nil {
		t.Fatal("a prompt and new tokens past the context: no error")
	}
}

// TestRunLoad loads a committed hub-layout Llama directory.
func TestRunLoad(t *testing.T) {
	if err := runLoad("../../testdata/llama/llama_gqa"); err != nil {
		t.Fatal(err)
	}
	if err := runLoad(t.TempDir()); err == nil {
		t.Fatal("an empty directory loaded without error")
	}
}

// TestRunFrom times committed hub-layout Llama and GPT-2 directories (BF16
// files) loaded as bfloat16 and as float32, and refuses a bad -dtype and a
// directory without a model.
func TestRunFrom(t *testing.T) {
	defer func(d string) { *dtypeFlag = d }(*dtypeFlag)
	for _, dir := range []string{"../../testdata/llama/llama3_mqa_bf16", "../../testdata/pretrained/bf16"} {
		for _, d := range []string{"bfloat16", "float32"} {
			*dtypeFlag = d
			if err := runFrom(dir, 3, 4, 0, 1, 1, 1); err != nil {
				t.Fatalf("%s -dtype=%s: %v", dir, d, err)
			}
		}
	}
	if err := runFrom("../../testdata/llama/llama3_mqa_bf16", 3, 1<<20, 0, 1, 1, 1); err == nil {
		t.Fatal("new tokens past the context: no error")
	}
	*dtypeFlag = "int8"
	if err := runFrom("../../testdata/llama/llama3_mqa_bf16", 3, 4, 0, 1, 1, 1); err == nil {
		t.Fatal("-dtype=int8: no error")
	}
	*dtypeFlag = "float32"
	if err := runFrom(t.TempDir(), 3, 4, 0, 1, 1, 1); err == nil {
		t.Fatal("an empty directory: no error")
	}
}
