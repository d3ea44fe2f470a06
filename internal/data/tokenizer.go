package data

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Tokenizer turns text into token ids and back.
type Tokenizer interface {
	// Kind returns "char" or "bpe".
	Kind() string
	// VocabSize returns the number of distinct ids.
	VocabSize() int
	// Encode returns the ids of text, or an error when text holds
	// something the vocabulary cannot express.
	Encode(text []byte) (*Tokens, error)
	// EncodeContext is Encode, returning ctx's error soon after ctx is
	// cancelled.
	EncodeContext(ctx context.Context, text []byte) (*Tokens, error)
	// Decode returns the text of ids. Byte-level tokens that do not
	// form valid UTF-8 are replaced by U+FFFD.
	Decode(ids []int) string
	// MarshalJSON returns the tokenizer's definition, which
	// UnmarshalTokenizer reads back.
	MarshalJSON() ([]byte, error)
}

// NewTokenizer is NewTokenizerContext without cancellation.
func NewTokenizer(kind string, text []byte, vocabSize int) (Tokenizer, error) {
	return NewTokenizerContext(context.Background(), kind, text, vocabSize)
}

// NewTokenizerContext builds a tokenizer of kind "char" (the characters of
// text) or "bpe" (byte-level BPE trained on text with at most vocabSize
// ids). Training a bpe tokenizer stops with ctx's error when ctx is
// cancelled.
func NewTokenizerContext(ctx context.Context, kind string, text []byte, vocabSize int) (Tokenizer, error) {
	switch kind {
	case "char":
		return NewChar(text), nil
	case "bpe":
		return TrainBPEContext(ctx, text, vocabSize)
	}
	return nil, fmt.Errorf("unknown tokenizer %q (want char or bpe)", kind)
}

// tokenizerJSON is the serialized form of both tokenizers.
type tokenizerJSON struct {
	Kind   string   `json:"kind"`
	Chars  string   `json:"chars,omitempty"`
	Merges [][2]int `json:"merges,omitempty"`
}

// UnmarshalTokenizer reads a tokenizer written by MarshalJSON.
func UnmarshalTokenizer(b []byte) (Tokenizer, error) {
	var j tokenizerJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	switch j.Kind {
	case "char":
		if j.Chars == "" || !utf8.ValidString(j.Chars) {
			return nil, fmt.Errorf("tokenizer: char vocabulary is empty or not UTF-8")
		}
		return newCharFromRunes([]rune(j.Chars))
	case "bpe":
		return newBPE(j.Merges)
	}
	return nil, fmt.Errorf("tokenizer: unknown kind %q", j.Kind)
}

// Char is a character-level tokenizer: one id per distinct Unicode code
// point of the training text, in code point order (nanoGPT's
// shakespeare_char).
type Char struct {
	chars []rune
	ascii [128]int32 // id+1 of ASCII characters, 0 when absent
	other map[rune]int
}

// NewChar returns the character tokenizer of the runes in text, which must
// be valid UTF-8.
func NewChar(text []byte) *Char {
	var seen [128]bool
	other := map[rune]bool{}
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			seen[c] = true
			i++
			continue
		}
		r, n := utf8.DecodeRune(text[i:])
		other[r] = true
		i += n
	}
	var chars []rune
	for c, ok := range seen {
		if ok {
			chars = append(chars, rune(c))
		}
	}
	for r := range other {
		chars = append(chars, r)
	}
	slices.Sort(chars)
	c, _ := newCharFromRunes(chars)
	return c
}

func newCharFromRunes(chars []rune) (*Char, error) {
	c := &Char{chars: chars, other: map[rune]int{}}
	for i, r := range chars {
		if i > 0 && chars[i-1] >= r {
			return nil, fmt.Errorf("tokenizer: char vocabulary is not sorted and distinct")
		}
		if r < utf8.RuneSelf {
			c.ascii[r] = int32(i + 1)
		} else {
			c.other[r] = i
		}
	}
	return c, nil
}

// Kind returns "char".
func (c *Char) Kind() string { return "char" }

// VocabSize returns the number of distinct characters.
func (c *Char) VocabSize() int { return len(c.chars) }

// Encode returns the ids of the characters of text.
func (c *Char) Encode(text []byte) (*Tokens, error) {
	return c.EncodeContext(context.Background(), text)
}

// EncodeContext is Encode, returning ctx's error soon after ctx is
// cancelled (it looks every 16 MiB of text).
func (c *Char) EncodeContext(ctx context.Context, text []byte) (*Tokens, error) {
	out := newTokens(len(c.chars), utf8.RuneCount(text))
	for i, next := 0, 0; i < len(text); {
		if i >= next {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			next = i + 16<<20
		}
		if b := text[i]; b < utf8.RuneSelf {
			id := c.ascii[b]
			if id == 0 {
				return nil, fmt.Errorf("character %q is not in the tokenizer's vocabulary", rune(b))
			}
			out.append(int(id - 1))
			i++
			continue
		}
		r, n := utf8.DecodeRune(text[i:])
		id, ok := c.other[r]
		if !ok {
			return nil, fmt.Errorf("character %q is not in the tokenizer's vocabulary", r)
		}
		out.append(id)
		i += n
	}
	return out, nil
}

// Decode returns the characters of ids.
func (c *Char) Decode(ids []int) string {
	rs := make([]rune, 0, len(ids))
	for _, id := range ids {
		if id >= 0 && id < len(c.chars) {
			rs = append(rs, c.chars[id])
		} else {
			rs = append(rs, utf8.RuneError)
		}
	}
	return string(rs)
}

// MarshalJSON returns {"kind":"char","chars":...}.
func (c *Char) MarshalJSON() ([]byte, error) {
	return json.Marshal(tokenizerJSON{Kind: "char", Chars: string(c.chars)})
}
