package main

// Fine-tuning and sampling pretrained models: --init_from names a Hugging
// Face model directory or a hub name (gpt2, gpt2-medium, …, or any
// owner/name in the Hugging Face cache), as nanoGPT's init_from='gpt2'
// does. config.json's model_type chooses the family: gpt2 (a GPT, whose
// --tokenizer=gpt2 reads GPT-2's tokenizer from the same directory or from
// --tokenizer_dir) or llama, mistral, qwen2, qwen3 (a Llama-family model with the
// directory's own tokenizer, see loadPretrainedTokenizer).

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// pretrained reports whether --init_from names a pretrained model rather
// than scratch or resume.
func (o *options) pretrained() bool {
	return o.InitFrom != "scratch" && o.InitFrom != "resume" && o.InitFrom != ""
}

// pretrainedModel is the model --init_from names, before its weights are
// read.
type pretrainedModel struct {
	dir   string          // the directory LoadPretrained reads
	cfg   nn.GPTConfig    // its config.json, as the run will use it (GPT-2)
	llama *nn.LlamaConfig // its config.json for the Llama family, else nil
}

// vocabSize returns the model's vocab_size.
func (p *pretrainedModel) vocabSize() int {
	if p.llama != nil {
		return p.llama.VocabSize
	}
	return p.cfg.VocabSize
}

// findPretrained resolves --init_from and reads the model's config.json.
func findPretrained(o *options) (*pretrainedModel, error) {
	fail := func(err error) error {
		msg := strings.TrimPrefix(trimNN(err), "pretrained model "+o.InitFrom+": ")
		return fmt.Errorf("--init_from=%s: %s", o.InitFrom, msg)
	}
	dir, err := nn.PretrainedDir(o.InitFrom)
	if err != nil {
		return nil, fail(err)
	}
	typ, err := nn.ReadModelType(dir)
	if err != nil {
		return nil, fail(err)
	}
	if typ != "gpt2" {
		lc, err := nn.ReadLlamaConfig(dir)
		if err != nil {
			return nil, fail(err)
		}
		return &pretrainedModel{dir: dir, llama: &lc}, nil
	}
	cfg, err := nn.ReadPretrainedConfig(dir)
	if err != nil {
		return nil, fail(err)
	}
	return &pretrainedModel{dir: dir, cfg: cfg}, nil
}

// applyPretrained makes o's model flags those of the pretrained model, as
// nanoGPT's train.py does with init_from='gpt2': n_layer, n_head, n_embd
// and bias come from config.json (a flag given with another value is
// overridden, with a note), the tokenizer is GPT-2's, and block_size
// defaults to n_positions; a smaller block_size crops the model
// (crop_block_size), a larger one is an error. dropout is the run's.
func applyPretrained(o *options, p *pretrainedModel) error {
	if p.llama != nil {
		return applyLlama(o, p)
	}
	c := p.cfg
	for _, f := range []struct {
		name string
		v    *int
		want int
	}{{"n_layer", &o.NLayer, c.NLayer}, {"n_head", &o.NHead, c.NHead}, {"n_embd", &o.NEmbd, c.NEmbd}} {
		if o.explicitFlags[f.name] && *f.v != f.want {
			o.initNotes = append(o.initNotes, fmt.Sprintf("--%s=%d is overridden by the pretrained model's %s=%d (as in nanoGPT, --init_from keeps the model's shape)", f.name, *f.v, f.name, f.want))
		}
		*f.v = f.want
	}
	if o.explicitFlags["bias"] && !o.Bias {
		o.initNotes = append(o.initNotes, "--bias=false is overridden: GPT-2 has biases (as in nanoGPT, --init_from keeps the model's shape)")
	}
	o.Bias = true
	if o.explicitFlags["tokenizer"] && o.Tokenizer != "gpt2" {
		return fmt.Errorf("--tokenizer=%s cannot be used with --init_from=%s: a pretrained GPT-2 model reads --tokenizer=gpt2", o.Tokenizer, o.InitFrom)
	}
	o.Tokenizer = "gpt2"
	if !o.explicitFlags["block_size"] {
		o.BlockSize = c.BlockSize
	}
	if o.BlockSize > c.BlockSize {
		return fmt.Errorf("--block_size=%d is larger than the pretrained model's n_positions=%d (%s); give --block_size=%d or less", o.BlockSize, c.BlockSize, p.dir, c.BlockSize)
	}
	p.cfg.BlockSize = o.BlockSize
	p.cfg.Dropout = float32(o.Dropout)
	return nil
}

// applyLlama is applyPretrained for a Llama-family model: n_layer, n_head
// and n_embd become num_hidden_layers, num_attention_heads and hidden_size
// (a flag given with another value is overridden, with a note), bias and
// dropout do not apply (a note when given), the tokenizer is the
// directory's, and block_size (the run's context) may not exceed
// max_position_embeddings.
func applyLlama(o *options, p *pretrainedModel) error {
	c := p.llama
	for _, f := range []struct {
		name, hf string
		v        *int
		want     int
	}{{"n_layer", "num_hidden_layers", &o.NLayer, c.NumHiddenLayers}, {"n_head", "num_attention_heads", &o.NHead, c.NumAttentionHeads},
		{"n_embd", "hidden_size", &o.NEmbd, c.HiddenSize}} {
		if o.explicitFlags[f.name] && *f.v != f.want {
			o.initNotes = append(o.initNotes, fmt.Sprintf("--%s=%d is overridden by the pretrained model's %s=%d (--init_from keeps the model's shape)", f.name, *f.v, f.hf, f.want))
		}
		*f.v = f.want
	}
	if o.explicitFlags["bias"] {
		o.initNotes = append(o.initNotes, fmt.Sprintf("--bias is ignored: the %s model's biases are those of its config.json", c.ModelType))
	}
	if o.explicitFlags["dropout"] && o.Dropout != 0 {
		o.initNotes = append(o.initNotes, fmt.Sprintf("--dropout=%g is ignored: %s models have no dropout", o.Dropout, c.ModelType))
	}
	o.Dropout = 0
	if o.explicitFlags["tokenizer"] && o.Tokenizer != "gpt2" {
		return fmt.Errorf("--tokenizer=%s cannot be used with --init_from=%s: a pretrained model reads its own tokenizer (--tokenizer_dir=DIR reads it from another folder)", o.Tokenizer, o.InitFrom)
	}
	o.Tokenizer = "gpt2"
	if o.BlockSize > c.MaxPositionEmbeddings {
		if o.explicitFlags["block_size"] {
			return fmt.Errorf("--block_size=%d is larger than the pretrained model's max_position_embeddings=%d (%s); give --block_size=%d or less", o.BlockSize, c.MaxPositionEmbeddings, p.dir, c.MaxPositionEmbeddings)
		}
		o.BlockSize = c.MaxPositionEmbeddings
	}
	return nil
}

// loadPretrainedTokenizer returns the tokenizer of the pretrained
// Llama-family model in modelDir (or of --tokenizer_dir), as
// tokenizer.LoadPretrained reads it: its tokenizer.json, else GPT-2-style
// vocab.json and merges.txt.
func loadPretrainedTokenizer(o *options, modelDir string) (tokenizer.Tokenizer, error) {
	dir, flag := o.TokenizerDir, "--tokenizer_dir"
	if dir == "" {
		dir, flag = modelDir, "--init_from"
	}
	tok, err := tokenizer.LoadPretrained(dir)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "tokenizer: ")
		if flag == "--init_from" {
			msg += " (the model's tokenizer.json, or vocab.json and merges.txt; --tokenizer_dir=DIR reads them from another folder)"
		}
		return nil, fmt.Errorf("%s: %s", flag, msg)
	}
	return tok, nil
}

// loadGPT2Tokenizer reads GPT-2's tokenizer from --tokenizer_dir, else
// from modelDir (the pretrained model's directory, empty when training
// from scratch), else returns the one built into Wick.
func loadGPT2Tokenizer(o *options, modelDir string) (tokenizer.Tokenizer, error) {
	dir, flag := o.TokenizerDir, "--tokenizer_dir"
	if dir == "" {
		dir, flag = modelDir, "--init_from"
	}
	if dir == "" {
		return tokenizer.NewGPT2(), nil // the vocabulary built into Wick
	}
	tok, err := tokenizer.LoadGPT2(dir)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "tokenizer: ")
		if flag == "--init_from" {
			msg += " (GPT-2's tokenizer files; --tokenizer_dir=DIR reads them from another folder)"
		}
		return nil, fmt.Errorf("%s: %s", flag, msg)
	}
	return tok, nil
}

// checkVocab returns an error unless every id of tok is a row of the
// model's embedding.
func checkVocab(tok tokenizer.Tokenizer, p *pretrainedModel) error {
	if n := tok.VocabSize(); n > p.vocabSize() {
		return fmt.Errorf("the tokenizer has %d tokens, more than the pretrained model's vocab_size=%d (%s): they do not belong together", n, p.vocabSize(), p.dir)
	}
	return nil
}

// loadPretrainedModel reads the weights of p and prepares the model for
// the run, its weights of dt: a GPT's context cropped to p.cfg.BlockSize,
// its dropout set.
func loadPretrainedModel(p *pretrainedModel, dt tensor.DType) (nn.CausalLM, error) {
	opts := nn.LoadOptions{DType: dt}
	if p.llama != nil {
		m, err := nn.LoadCausalLMWith(p.dir, opts)
		if err != nil {
			return nil, errors.New(trimNN(err))
		}
		return m, nil
	}
	model, err := nn.LoadPretrainedWith(p.dir, opts)
	if err != nil {
		return nil, errors.New(trimNN(err))
	}
	model.CropBlockSize(p.cfg.BlockSize)
	model.SetDropout(p.cfg.Dropout)
	if model.Config != p.cfg {
		return nil, fmt.Errorf("%s: the model read is %+v, not %+v", p.dir, model.Config, p.cfg)
	}
	return model, nil
}

// trimNN drops the "nn: " and function-name prefixes of nn's errors.
func trimNN(err error) string {
	s := strings.TrimPrefix(err.Error(), "nn: ")
	for _, f := range []string{"LoadPretrained: ", "ReadPretrainedConfig: ", "LoadCausalLM: ", "ReadLlamaConfig: ", "ReadModelType: "} {
		s = strings.TrimPrefix(s, f)
	}
	return s
}

// preDir returns the directory of p, or "" when p is nil.
func preDir(p *pretrainedModel) string {
	if p == nil {
		return ""
	}
	return p.dir
}
