package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/wickml/wick/internal/sampling"
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
	if _, err := useDevice(o.Device); err != nil {
		return err
	}
	if o.pretrained() {
		return samplePretrained(ctx, o, stdout)
	}
	path := ckptPath(o.OutDir)
	sd, meta, err := readCheckpointStoppable(ctx, path)
	if err != nil {
		return err
	}
	if err := checkSampleMemory(o, meta.Model); err != nil {
		return err
	}
	// The model is built as nn.LoadCheckpoint builds it, without random
	// draws, so that the tokens drawn from --seed are those a program
	// gets from nn.LoadCheckpoint, tensor.ManualSeed(seed) and Generate.
	ck := &nn.Checkpoint{Path: path, Config: meta.Model, Tokenizer: meta.tok, Tensors: sd}
	model, err := ck.NewModel()
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "nn: "))
	}
	tensor.ManualSeed(o.Seed)
	text, err := generate(ctx, model, meta.tok, o)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, text)
	return nil
}

// samplePretrained is the sample command with --init_from naming a
// pretrained GPT-2: its tokenizer comes from --tokenizer_dir or the
// model's directory, and the model is sampled at its full context.
func samplePretrained(ctx context.Context, o *options, stdout io.Writer) error {
	pre, err := stoppable(ctx, "reading --init_from stopped", func() (*pretrainedModel, error) { return findPretrained(o) })
	if err != nil {
		return err
	}
	tok, err := stoppable(ctx, "reading the GPT-2 tokenizer stopped", func() (tokenizer.Tokenizer, error) { return loadGPT2Tokenizer(o, pre.dir) })
	if err != nil {
		return err
	}
	if err := checkVocab(tok, pre); err != nil {
		return err
	}
	if err := checkSampleMemory(o, pre.cfg); err != nil {
		return err
	}
	model, err := stoppable(ctx, "reading --init_from stopped", func() (*nn.GPT, error) { return loadPretrainedModel(pre) })
	if err != nil {
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

// generate continues o.Prompt (a newline when empty) by o.NumTokens tokens
// o.NumSamples times, in eval mode, and returns the texts separated by
// nanoGPT's "---------------" lines. A cancelled ctx stops it between two
// tokens; the tokens are those of one Generate call.
func generate(ctx context.Context, model *nn.GPT, tok tokenizer.Tokenizer, o *options) (string, error) {
	prompt := o.Prompt
	if prompt == "" {
		prompt = "\n"
	}
	start, err := tokenizer.EncodeStrict(tok, prompt)
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
	temp, topK := sampling.Greedy(o.Temperature, o.TopK)
	out, err = model.GenerateContext(ctx, out, o.NumTokens, temp, topK, nil)
	if err != nil {
		return "", interrupted(ctx, "text generation stopped")
	}
	all := out.Ints()
	n := out.Size(1)
	texts := make([]string, o.NumSamples)
	for i := range texts {
		texts[i] = tok.Decode(all[i*n : (i+1)*n])
	}
	return strings.Join(texts, "\n---------------\n"), nil
}
