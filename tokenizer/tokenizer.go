package tokenizer

import (
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
	// Kind names the tokenizer in its saved form ("gpt2", ...).
	Kind() string
	// MarshalJSON returns the tokenizer's definition, a JSON object with
	// a "kind" field, which Unmarshal reads back.
	MarshalJSON() ([]byte, error)
}

// kindJSON is the field every saved tokenizer has.
type kindJSON struct {
	Kind string `json:"kind"`
}

// Unmarshal reads a tokenizer saved with its MarshalJSON method. It returns
// an error when b is not such a definition.
func Unmarshal(b []byte) (Tokenizer, error) {
	var k kindJSON
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	switch k.Kind {
	case "gpt2":
		return unmarshalGPT2(b)
	case "":
		return nil, fmt.Errorf("tokenizer: definition has no \"kind\"")
	}
	return nil, fmt.Errorf("tokenizer: unknown kind %q (want gpt2)", k.Kind)
}
