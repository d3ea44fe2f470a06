package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// writeModelCmd is "benchserve model -kind=K -out=DIR": a model with
// random weights (seeded) for the serving benchmarks, which serve
// --model=DIR loads:
//
//	gpt2    GPT-2 124M's shape (12 layers, 12 heads, 768 wide, context 1024,
//	        GPT-2's 50257-token vocabulary), a train checkpoint
//	qwen3   a small Qwen3 (hidden 256, 4 layers, 4 heads of 64 over 2 KV
//	        heads, intermediate 768, context 2048, vocabulary 151936, tied
//	        embeddings), a Hugging Face directory (config.json and
//	        model.safetensors; its tokenizer is given with --tokenizer_dir
//	        or copied beside it)
//	recipe  the CPU recipe's shape (4 layers, 4 heads, 128 wide, context 64)
//	        over tiny Shakespeare's 65 characters, a train checkpoint
func writeModelCmd(args []string) error {
	fs := flag.NewFlagSet("benchserve model", flag.ContinueOnError)
	kind := fs.String("kind", "gpt2", "gpt2, qwen3 or recipe")
	out := fs.String("out", "", "the directory to write (required)")
	seed := fs.Uint64("seed", 1, "the weights' seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("model: -out is required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("model: %v", err)
	}
	gen := tensor.NewGenerator(*seed)
	meta := json.RawMessage(`{"config": {}}`)
	switch *kind {
	case "gpt2":
		tok := tokenizer.NewGPT2()
		m := nn.NewGPTWith(nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 1024, NLayer: 12, NHead: 12, NEmbd: 768, Bias: true}, gen)
		return nn.SaveCheckpoint(filepath.Join(*out, "ckpt.safetensors"), &nn.Checkpoint{Tokenizer: tok, LM: m, Metadata: meta})
	case "recipe":
		chars := []byte("\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
		tok := tokenizer.NewChar(chars)
		m := nn.NewGPTWith(nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 64, NLayer: 4, NHead: 4, NEmbd: 128, Bias: true}, gen)
		return nn.SaveCheckpoint(filepath.Join(*out, "ckpt.safetensors"), &nn.Checkpoint{Tokenizer: tok, LM: m, Metadata: meta})
	case "qwen3":
		cfg := nn.LlamaConfig{
			ModelType: "qwen3", VocabSize: 151936, HiddenSize: 256, IntermediateSize: 768,
			NumHiddenLayers: 4, NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 64,
			MaxPositionEmbeddings: 2048, RMSNormEps: 1e-6, RopeTheta: 1e6, QKNorm: true,
			TieWordEmbeddings: true, EOSTokenIDs: []int{151645},
		}
		return nn.NewLlamaWith(cfg, gen).SavePretrained(*out)
	}
	return fmt.Errorf("model: -kind=%s, want gpt2, qwen3 or recipe", *kind)
}
