package tokenizer

import (
	"context"
	"encoding/json"
	"fmt"
)

// Tokenizer turns text into token ids and back. Its methods are safe for
// concurrent use.
type Tokenizer interface {
	// Encode returns the ids of text.
	Encode(text string) []int
	// Decode returns the text of ids. Ids outside the vocabulary decode
	// to U+FFFD, and so do byte sequences that are not valid UTF-8 (ids
	// that cut a character in two).
	Decode(ids []int) string
	// VocabSize returns the number of ids: every id is in [0, VocabSize).
	VocabSize() int
	// Kind names the tokenizer in its saved form: "char", "bpe",
	// "gpt2" or "hf".
	Kind() string
	// MarshalJSON returns the tokenizer's definition, a JSON object with
	// a "kind" field, which Unmarshal reads back.
	MarshalJSON() ([]byte, error)
}

// kindJSON is the field every saved tokenizer has.
type kindJSON struct {
	Kind string `json:"kind"`
}

// EachEncoder is implemented by tokenizers that encode a large text
// without holding all its ids as ints, and stop when a context is
// cancelled: Char and BPE, for training corpora.
type EachEncoder interface {
	// EncodeEach encodes text, passing its ids to emit a block at a time,
	// in order; emit must not keep or change the slice it is given. It
	// returns ctx's error soon after ctx is cancelled, or an error when
	// text holds something the tokenizer cannot encode.
	EncodeEach(ctx context.Context, text []byte, emit func(ids []int)) error
}

// EncodeStrict returns the ids of text, or an error when tok cannot encode
// all of it: a character outside a Char tokenizer's vocabulary, which
// tok.Encode would drop. Tokenizers that encode any text (BPE, GPT2) never
// return an error.
func EncodeStrict(tok Tokenizer, text string) ([]int, error) {
	if s, ok := tok.(interface {
		EncodeStrict(string) ([]int, error)
	}); ok {
		return s.EncodeStrict(text)
	}
	return tok.Encode(text), nil
}

// Train makes a tokenizer of kind "char" (the characters of text) or "bpe"
// (byte-level BPE trained on text with at most vocabSize ids; see
// TrainBPEContext). Training a bpe tokenizer stops with ctx's error when
// ctx is cancelled. vocabSize is ignored for char.
func Train(ctx context.Context, kind string, text []byte, vocabSize int) (Tokenizer, error) {
	switch kind {
	case "char":
		return NewChar(text), nil
	case "bpe":
		return TrainBPEContext(ctx, text, vocabSize)
	}
	return nil, fmt.Errorf("tokenizer: unknown kind %q to train (want char or bpe)", kind)
}

// Unmarshal reads a tokenizer saved with its MarshalJSON method, including
// the char and bpe tokenizers in every checkpoint cmd/train has written.
// It returns an error when b is not such a definition.
func Unmarshal(b []byte) (Tokenizer, error) {
	var k kindJSON
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	switch k.Kind {
	case "char", "bpe":
		var j savedJSON
		if err := json.Unmarshal(b, &j); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", k.Kind, err)
		}
		if k.Kind == "char" {
			return unmarshalChar(j)
		}
		return newBPE(j.Merges)
	case "gpt2":
		return unmarshalGPT2(b)
	case "hf":
		return unmarshalHF(b)
	case "":
		return nil, fmt.Errorf("tokenizer: definition has no \"kind\"")
	}
	return nil, fmt.Errorf("tokenizer: unknown kind %q (want char, bpe, gpt2 or hf)", k.Kind)
}
