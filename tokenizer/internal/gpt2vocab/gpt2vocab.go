// Package gpt2vocab holds GPT-2's vocabulary files, OpenAI's encoder.json
// and vocab.bpe, compressed with gzip and embedded in the binary, for
// tokenizer.NewGPT2. They are OpenAI's, under its Modified MIT License (the
// LICENSE file beside this one).
package gpt2vocab

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
)

//go:embed encoder.json.gz
var encoderGz string

//go:embed vocab.bpe.gz
var mergesGz string

// EncoderJSON returns the content of encoder.json: a JSON object mapping
// each of GPT-2's 50257 tokens, in its byte-to-unicode form, to its id.
func EncoderJSON() ([]byte, error) { return gunzip("encoder.json", encoderGz) }

// VocabBPE returns the content of vocab.bpe: a "#version: 0.2" line, then
// GPT-2's 50000 merges in rank order, one "left right" pair per line.
func VocabBPE() ([]byte, error) { return gunzip("vocab.bpe", mergesGz) }

func gunzip(name, gz string) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader([]byte(gz)))
	if err != nil {
		return nil, fmt.Errorf("embedded %s: %w", name, err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("embedded %s: %w", name, err)
	}
	return b, nil
}
