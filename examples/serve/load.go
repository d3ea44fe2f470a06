package main

import (
	"encoding/json"
	"fmt"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// Metadata of a checkpoint written by train (cmd/train/checkpoint.go): the
// format tag, and a JSON record of which serve reads the model's config and
// the tokenizer.
const (
	ckptFormat = "wick-train/1"
	metaFormat = "format"
	metaState  = "wick_train"
)

// loadCheckpoint reads a train checkpoint: the model, in eval mode, and its
// tokenizer. The optimizer's tensors in the file are skipped.
func loadCheckpoint(path string) (*nn.GPT, tokenizer.Tokenizer, error) {
	var sd nn.StateDict
	var md map[string]string
	var err error
	if perr := tensor.Catch(func() { sd, md, err = nn.LoadStateDictFile(path) }); perr != nil {
		err = perr
	}
	if err != nil {
		return nil, nil, err
	}
	if md[metaFormat] != ckptFormat {
		return nil, nil, fmt.Errorf("%s was not written by train (metadata format %q, want %q)", path, md[metaFormat], ckptFormat)
	}
	var meta struct {
		Model     nn.GPTConfig    `json:"model_args"`
		Tokenizer json.RawMessage `json:"tokenizer"`
	}
	if err := json.Unmarshal([]byte(md[metaState]), &meta); err != nil {
		return nil, nil, fmt.Errorf("%s: metadata: %v", path, err)
	}
	if err := meta.Model.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	tok, err := tokenizer.Unmarshal(meta.Tokenizer)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	if tok.VocabSize() != meta.Model.VocabSize {
		return nil, nil, fmt.Errorf("%s: its tokenizer has %d tokens, its model %d", path, tok.VocabSize(), meta.Model.VocabSize)
	}
	model := nn.NewGPTWith(meta.Model, tensor.NewGenerator(0)) // the weights are replaced below
	if err := nn.LoadStateDict(model, sd.WithoutPrefix("optimizer.")); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	model.Eval()
	return model, tok, nil
}
