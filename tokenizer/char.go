package tokenizer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// savedJSON is the saved form of the char and bpe tokenizers, the one
// cmd/train has always written into its checkpoints.
type savedJSON struct {
	Kind   string   `json:"kind"`
	Chars  string   `json:"chars,omitempty"`
	Merges [][2]int `json:"merges,omitempty"`
}

// Char is a character-level tokenizer: one id per distinct Unicode code
// point of the text it was made from, in code point order (nanoGPT's
// shakespeare_char). Its methods may be called from many goroutines at once.
//
// A character has an id only if it occurred in that text. Encode drops the
// characters that have none; EncodeStrict and EncodeEach report the first
// of them as an error instead.
type Char struct {
	chars []rune
	ascii [128]int32 // id+1 of ASCII characters, 0 when absent
	other map[rune]int
}

var (
	_ Tokenizer   = (*Char)(nil)
	_ EachEncoder = (*Char)(nil)
)

// NewChar returns the character tokenizer of the runes in text. Bytes that
// are not valid UTF-8 count as U+FFFD.
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

// unmarshalChar reads {"kind":"char","chars":...}.
func unmarshalChar(j savedJSON) (*Char, error) {
	if j.Chars == "" || !utf8.ValidString(j.Chars) {
		return nil, fmt.Errorf("tokenizer: char vocabulary is empty or not UTF-8")
	}
	return newCharFromRunes([]rune(j.Chars))
}

// Kind returns "char".
func (c *Char) Kind() string { return "char" }

// VocabSize returns the number of distinct characters.
func (c *Char) VocabSize() int { return len(c.chars) }

// id returns the id of the character at the start of s (len(s) > 0), its
// length in bytes, and false when it has no id.
func (c *Char) id(s []byte) (id, n int, ok bool) {
	if b := s[0]; b < utf8.RuneSelf {
		v := c.ascii[b]
		return int(v - 1), 1, v != 0
	}
	r, n := utf8.DecodeRune(s)
	id, ok = c.other[r]
	return id, n, ok
}

// unknown is the error for a character outside the vocabulary.
func unknown(s []byte) error {
	r, _ := utf8.DecodeRune(s)
	return fmt.Errorf("character %q is not in the tokenizer's vocabulary", r)
}

// Encode returns the ids of the characters of text, leaving out the
// characters that are not in the vocabulary (EncodeStrict reports them).
func (c *Char) Encode(text string) []int {
	s := []byte(text)
	out := make([]int, 0, utf8.RuneCount(s))
	for i := 0; i < len(s); {
		id, n, ok := c.id(s[i:])
		if ok {
			out = append(out, id)
		}
		i += n
	}
	return out
}

// EncodeStrict returns the ids of the characters of text, or an error
// naming the first character that is not in the vocabulary.
func (c *Char) EncodeStrict(text string) ([]int, error) {
	s := []byte(text)
	out := make([]int, 0, utf8.RuneCount(s))
	for i := 0; i < len(s); {
		id, n, ok := c.id(s[i:])
		if !ok {
			return nil, unknown(s[i:])
		}
		out = append(out, id)
		i += n
	}
	return out, nil
}

// EncodeEach encodes text as EncodeStrict does, passing the ids to emit a
// block at a time, in order. It returns an error naming the first
// character outside the vocabulary, or ctx's error soon after ctx is
// cancelled (it looks every 16 MiB of text). emit must not keep the slice
// it is given.
func (c *Char) EncodeEach(ctx context.Context, text []byte, emit func(ids []int)) error {
	buf := make([]int, 0, 4096)
	for i, next := 0, 0; i < len(text); {
		if i >= next {
			if err := ctx.Err(); err != nil {
				return err
			}
			next = i + 16<<20
		}
		id, n, ok := c.id(text[i:])
		if !ok {
			return unknown(text[i:])
		}
		if buf = append(buf, id); len(buf) == cap(buf) {
			emit(buf)
			buf = buf[:0]
		}
		i += n
	}
	if len(buf) > 0 {
		emit(buf)
	}
	return nil
}

// Decode returns the characters of ids; ids outside the vocabulary decode
// to U+FFFD.
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

// MarshalJSON returns {"kind":"char","chars":...}: the vocabulary's
// characters in id order.
func (c *Char) MarshalJSON() ([]byte, error) {
	return json.Marshal(savedJSON{Kind: "char", Chars: string(c.chars)})
}
