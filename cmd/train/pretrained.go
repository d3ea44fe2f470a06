package main

// Fine-tuning and sampling pretrained GPT-2 models: --init_from names a
// Hugging Face model directory or a hub name (gpt2, gpt2-medium, …), as
// nanoGPT's init_from='gpt2' does, and --tokenizer=gpt2 reads GPT-2's
// tokenizer from the same directory or from --tokenizer_dir.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wickml/wick/nn"
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
	dir string       // the directory LoadPretrained reads
	cfg nn.GPTConfig // its config.json, as the run will use it
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
	if n := tok.VocabSize(); n > p.cfg.VocabSize {
		return fmt.Errorf("the tokenizer has %d tokens, more than the pretrained model's vocab_size=%d (%s): they do not belong together", n, p.cfg.VocabSize, p.dir)
	}
	return nil
}

// loadPretrainedModel reads the weights of p and prepares the model for
// the run: its context cropped to p.cfg.BlockSize, its dropout set.
func loadPretrainedModel(p *pretrainedModel) (*nn.GPT, error) {
	model, err := nn.LoadPretrained(p.dir)
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
	for _, f := range []string{"LoadPretrained: ", "ReadPretrainedConfig: "} {
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
