package data

import (
	"encoding/binary"
	"fmt"
)

// Tokens is a flat array of token ids, stored as uint16 when the vocabulary
// fits and as uint32 otherwise, or as the little-endian uint16 bytes of a
// memory-mapped nanoGPT train.bin or val.bin. The zero value is empty.
type Tokens struct {
	u16  []uint16
	u32  []uint32
	le16 []byte
}

// newTokens returns an empty array with room for n ids below vocab.
func newTokens(vocab, n int) *Tokens {
	if vocab <= 1<<16 {
		return &Tokens{u16: make([]uint16, 0, n)}
	}
	return &Tokens{u32: make([]uint32, 0, n)}
}

// TokensFromInts returns an array holding ids, which must lie in [0, vocab).
func TokensFromInts(ids []int, vocab int) *Tokens {
	t := newTokens(vocab, len(ids))
	for _, id := range ids {
		t.append(id)
	}
	return t
}

func (t *Tokens) append(id int) {
	if t.u32 != nil {
		t.u32 = append(t.u32, uint32(id))
		return
	}
	t.u16 = append(t.u16, uint16(id))
}

// Len returns the number of ids.
func (t *Tokens) Len() int {
	switch {
	case t.u32 != nil:
		return len(t.u32)
	case t.le16 != nil:
		return len(t.le16) / 2
	}
	return len(t.u16)
}

// At returns the i-th id.
func (t *Tokens) At(i int) int {
	switch {
	case t.u32 != nil:
		return int(t.u32[i])
	case t.le16 != nil:
		return int(binary.LittleEndian.Uint16(t.le16[2*i:]))
	}
	return int(t.u16[i])
}

// Slice returns the ids [i, j) as an array sharing memory with t.
func (t *Tokens) Slice(i, j int) *Tokens {
	switch {
	case t.u32 != nil:
		return &Tokens{u32: t.u32[i:j:j]}
	case t.le16 != nil:
		return &Tokens{le16: t.le16[2*i : 2*j : 2*j]}
	}
	return &Tokens{u16: t.u16[i:j:j]}
}

// Max returns the largest id, or -1 when t is empty.
func (t *Tokens) Max() int {
	m := -1
	for i := range t.Len() {
		m = max(m, t.At(i))
	}
	return m
}

// Ints returns a copy of the ids as ints.
func (t *Tokens) Ints() []int {
	out := make([]int, t.Len())
	for i := range out {
		out[i] = t.At(i)
	}
	return out
}

// Split divides tokens into the first trainFrac part (for training) and the
// rest (for validation), like nanoGPT's prepare scripts (0.9). It returns an
// error naming the problem when either part is shorter than minLen tokens,
// the length one (input, target) pair of a batch needs.
func Split(tok *Tokens, trainFrac float64, minLen int) (train, val *Tokens, err error) {
	n := tok.Len()
	cut := int(float64(n) * trainFrac)
	train, val = tok.Slice(0, cut), tok.Slice(cut, n)
	if train.Len() < minLen || val.Len() < minLen {
		return nil, nil, fmt.Errorf("corpus too short: %d tokens split into %d train and %d validation tokens, but each part needs at least block_size+1 = %d; use a longer text or a smaller --block_size",
			n, train.Len(), val.Len(), minLen)
	}
	return train, val, nil
}
