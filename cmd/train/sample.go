package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// runSample is the sample command: it loads out_dir/ckpt.safetensors, or
// the pretrained model --init_from names, and prints num_samples
// generated texts, like nanoGPT's sample.py.
func runSample(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := defaultOptions()
	fs, groups := newFlagSet(o, true)
	if err := stoppableErr(ctx, "reading the config file stopped", func() error { return parseFlags(fs, o, args) }); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs, groups, true)
		}
		return err
	}
	// validateSample reads a --start=FILE:path prompt
	if err := stoppableErr(ctx, "reading --start=FILE: stopped", o.validateSample); err != nil {
		return err
	}
	if err := o.checkSampleAdapter(); err != nil {
		return err
	}
	dev, err := useDevice(o.Device)
	if err != nil {
		return err
	}
	dt, err := checkSampleDType(o, dev)
	if err != nil {
		return err
	}
	applyMaxMemory(o)
	if o.pretrained() {
		return samplePretrained(ctx, o, dt, stdout)
	}
	// nn.LoadCheckpoint checks every tensor before it reads any, reads the
	// model's into the model it builds and leaves the optimizer's unread.
	ck, meta, err := loadCheckpointStoppable(ctx, ckptPath(o.OutDir))
	if err != nil {
		return err
	}
	if err := checkSampleMemory(o, sampleShape(meta.Model, meta.Llama)); err != nil {
		return err
	}
	nn.ToDType(ck.LM, dt) // a checkpoint is float32: rounded parameter by parameter
	tensor.ManualSeed(o.Seed)
	text, err := generate(ctx, ck.LM, meta.tok, o)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, text)
	return nil
}

// samplePretrained is the sample command with --init_from naming a
// pretrained model: its tokenizer comes from --tokenizer_dir or the
// model's directory, and the model is sampled at its full context,
// stopping at its config's EOS tokens, its weights loaded as dt.
func samplePretrained(ctx context.Context, o *options, dt tensor.DType, stdout io.Writer) error {
	pre, err := stoppable(ctx, "reading --init_from stopped", func() (*pretrainedModel, error) { return findPretrained(o) })
	if err != nil {
		return err
	}
	tok, err := stoppable(ctx, "reading the tokenizer stopped", func() (tokenizer.Tokenizer, error) {
		if pre.llama != nil {
			return loadPretrainedTokenizer(o, pre.dir)
		}
		return loadGPT2Tokenizer(o, pre.dir)
	})
	if err != nil {
		return err
	}
	if err := checkVocab(tok, pre); err != nil {
		return err
	}
	if err := checkSampleMemory(o, sampleShape(pre.cfg, pre.llama)); err != nil {
		return err
	}
	model, err := stoppable(ctx, "reading --init_from stopped", func() (nn.CausalLM, error) { return loadPretrainedModel(pre, dt) })
	if err != nil {
		return err
	}
	if err := applySampleAdapter(o, model); err != nil {
		return err
	}
	tensor.ManualSeed(o.Seed)
	text, err := generate(ctx, model, tok, o)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, text)
	return nil
}

// sampleShape returns the GPTConfig whose memory estimate stands for
// sampling the model: c itself, or for a Llama-family model one of its
// layers, width, vocabulary and context (an approximation: its MLP and
// key/value heads differ from a GPT's).
func sampleShape(c nn.GPTConfig, l *nn.LlamaConfig) nn.GPTConfig {
	if l == nil {
		return c
	}
	return nn.GPTConfig{VocabSize: l.VocabSize, BlockSize: l.MaxPositionEmbeddings, NLayer: l.NumHiddenLayers,
		NHead: l.NumAttentionHeads, NEmbd: l.HiddenSize, Bias: l.QKVBias}
}

// generate continues o.Prompt (a newline when empty) by up to o.NumTokens
// tokens o.NumSamples times, in eval mode, and returns the texts separated
// by nanoGPT's "---------------" lines. A sample ends early at one of the
// model's EOS tokens (its config.json's eos_token_id), which it keeps. A
// cancelled ctx stops it between two tokens; the tokens are those of one
// nn.Generate call.
func generate(ctx context.Context, model nn.CausalLM, tok tokenizer.Tokenizer, o *options) (string, error) {
	prompt := o.Prompt
	if prompt == "" {
		prompt = "\n"
	}
	start, err := encodePrompt(tok, prompt)
	if err != nil {
		if o.Prompt == "" { // a vocabulary without newlines: start from token 0
			start, err = []int{0}, nil
		} else {
			return "", fmt.Errorf("--prompt: %v", err)
		}
	}
	if len(start) == 0 || o.NumSamples == 0 {
		return "", nil
	}
	rows := make([]int, 0, o.NumSamples*len(start))
	for range o.NumSamples {
		rows = append(rows, start...)
	}
	model.Eval()
	defer model.Train()
	out := tensor.FromInts(rows, o.NumSamples, len(start))
	// one call, so that the key/value cache serves every token; it stops
	// between two tokens on SIGINT or SIGTERM
	out, err = nn.Generate(model, out, nn.GenerateOptions{MaxNewTokens: o.NumTokens, Temperature: float32(o.Temperature), TopK: o.TopK, Context: ctx})
	if err != nil {
		return "", interrupted(ctx, "text generation stopped")
	}
	all := out.Ints()
	n := out.Size(1)
	eos := model.EOSTokenIDs()
	texts := make([]string, o.NumSamples)
	for i := range texts {
		row := all[i*n : (i+1)*n]
		for j := len(start); j < len(row); j++ {
			if slices.Contains(eos, row[j]) { // the rows that stopped first are padded
				row = row[:j+1]
				break
			}
		}
		texts[i] = tok.Decode(row)
	}
	return strings.Join(texts, "\n---------------\n"), nil
}

// encodePrompt encodes a prompt as Hugging Face's tokenizer(prompt) does:
// with a tokenizer.json's special tokens (its post-processor's BOS, for
// one); other tokenizers encode it as Encode does, refusing text they
// cannot encode.
func encodePrompt(tok tokenizer.Tokenizer, prompt string) ([]int, error) {
	if hf, ok := tok.(*tokenizer.HF); ok {
		return hf.EncodeSpecial(prompt), nil
	}
	return tokenizer.EncodeStrict(tok, prompt)
}
