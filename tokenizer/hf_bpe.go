package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// hfBPE is the "BPE" model of a tokenizer.json: Hugging Face tokenizers'
// byte-pair merge. A word starts as one symbol per character (per byte,
// under a ByteLevel pre-tokenizer), each the id of its token; characters
// with no token become their "<0xNN>" byte tokens (byte_fallback) or the
// unknown token (fused into one for a run, with fuse_unk), or are dropped.
// Then, as long as two adjacent symbols form one of the listed merges, the
// merge of lowest rank is made, the leftmost on ties.
type hfBPE struct {
	vocab  map[string]int32 // the file's tokens
	tokens []string         // id → token
	has    []bool           // ids that have a token

	byteMode  bool             // symbols are bytes (a ByteLevel pre-tokenizer)
	byteVocab map[string]int32 // byteMode: the bytes each byte-level token stands for → id
	byteID    [256]int32       // byteMode: the id of each byte's token, or -1

	merges       map[uint64]merged // (left id, right id) → rank and merged id
	ignoreMerges bool              // a word that is a token is that token
	byteFallback bool
	fallbackID   [256]int32 // the ids of "<0xNN>", or -1
	unk          int32      // the unknown token's id, or -1
	fuseUnk      bool

	// cut is "▁" when no token has it right after another character
	// (SentencePiece-style vocabularies): a word can then be cut before
	// each "▁" that follows another character, and its parts merged
	// apart, with the result of merging the whole (a text with no
	// pre-tokenizer is one long word).
	cut string
}

// lookup returns the id of the token that is all of piece.
func (m *hfBPE) lookup(piece string) (int32, bool) {
	if m.byteMode {
		id, ok := m.byteVocab[piece]
		return id, ok
	}
	id, ok := m.vocab[piece]
	return id, ok
}

func (m *hfBPE) pair(a, b int32) (int32, int32) {
	if x, ok := m.merges[pairKey(a, b)]; ok {
		return x.rank, x.id
	}
	return noRank, -1
}

// appendWord appends the ids of one pre-tokenized piece to out.
func (m *hfBPE) appendWord(out []int, w string) []int {
	var buf [linearMax]int32
	syms := buf[:0]
	unk, unkOpen := int32(-1), false
	addUnknown := func(unit string) {
		if m.byteFallback {
			ok := true
			for i := 0; i < len(unit); i++ {
				if m.fallbackID[unit[i]] < 0 {
					ok = false
					break
				}
			}
			if ok {
				// As tokenizers does, a pending unknown token is not
				// flushed before the byte tokens.
				for i := 0; i < len(unit); i++ {
					syms = append(syms, m.fallbackID[unit[i]])
				}
				return
			}
		}
		if m.unk < 0 {
			return
		}
		if unkOpen && !m.fuseUnk {
			syms = append(syms, unk)
		}
		unk, unkOpen = m.unk, true
	}
	add := func(id int32) {
		if unkOpen {
			syms, unkOpen = append(syms, unk), false
		}
		syms = append(syms, id)
	}
	if m.byteMode {
		for i := 0; i < len(w); i++ {
			if id := m.byteID[w[i]]; id >= 0 {
				add(id)
			} else {
				addUnknown(string(byteRune[w[i]]))
			}
		}
	} else {
		for i := 0; i < len(w); {
			_, n := utf8.DecodeRuneInString(w[i:])
			if id, ok := m.vocab[w[i:i+n]]; ok {
				add(id)
			} else {
				addUnknown(w[i : i+n])
			}
			i += n
		}
	}
	if unkOpen {
		syms = append(syms, unk)
	}
	if len(syms) > linearMax {
		return m.appendMergedHeap(out, syms)
	}
	return m.appendMergedLinear(out, syms)
}

// appendMergedLinear merges a short word by scanning for the best pair.
func (m *hfBPE) appendMergedLinear(out []int, id []int32) []int {
	n := len(id)
	var rankBuf, midBuf [linearMax]int32
	rank, mid := rankBuf[:n], midBuf[:n]
	for i := 0; i+1 < n; i++ {
		rank[i], mid[i] = m.pair(id[i], id[i+1])
	}
	for n > 1 {
		best, bestRank := -1, int32(noRank)
		for i := 0; i+1 < n; i++ {
			if rank[i] < bestRank {
				best, bestRank = i, rank[i]
			}
		}
		if best < 0 {
			break
		}
		id[best] = mid[best]
		copy(id[best+1:n-1], id[best+2:n])
		copy(rank[best+1:n-1], rank[best+2:n])
		copy(mid[best+1:n-1], mid[best+2:n])
		n--
		if best > 0 {
			rank[best-1], mid[best-1] = m.pair(id[best-1], id[best])
		}
		if best+1 < n {
			rank[best], mid[best] = m.pair(id[best], id[best+1])
		} else {
			rank[best] = noRank
		}
	}
	for _, t := range id[:n] {
		out = append(out, int(t))
	}
	return out
}

// appendMergedHeap merges a long word through mergeHeap, as tokenizers
// does with its heap of candidate merges keyed by (rank, position).
func (m *hfBPE) appendMergedHeap(out []int, id []int32) []int {
	return mergeHeap(out, id, m.pair)
}

// bpeJSON is a tokenizer.json "BPE" model; Vocab and Merges are read by
// scanVocab and scanMerges.
type bpeJSON struct {
	Type                    string          `json:"type"`
	Dropout                 *float64        `json:"dropout"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
}

// newHFBPE checks and builds the model; byteMode says whether a ByteLevel
// pre-tokenizer feeds it bytes.
func newHFBPE(j *bpeJSON, byteMode bool) (*hfBPE, error) {
	if j.Dropout != nil && *j.Dropout != 0 {
		return nil, fmt.Errorf("model BPE: dropout %v is not supported (it makes encoding random)", *j.Dropout)
	}
	if p := j.ContinuingSubwordPrefix; p != nil && *p != "" {
		return nil, fmt.Errorf("model BPE: continuing_subword_prefix %q is not supported", *p)
	}
	if p := j.EndOfWordSuffix; p != nil && *p != "" {
		return nil, fmt.Errorf("model BPE: end_of_word_suffix %q is not supported", *p)
	}
	vocab, err := scanVocab(j.Vocab, maxVocab)
	if err != nil {
		return nil, fmt.Errorf("model BPE: vocab: %w", err)
	}
	merges, err := scanMerges(j.Merges, maxMerges)
	if err != nil {
		return nil, fmt.Errorf("model BPE: merges: %w", err)
	}
	m := &hfBPE{
		vocab:        make(map[string]int32, len(vocab)),
		merges:       make(map[uint64]merged, len(merges)),
		ignoreMerges: j.IgnoreMerges,
		byteFallback: j.ByteFallback,
		fuseUnk:      j.FuseUnk,
		byteMode:     byteMode,
		unk:          -1,
	}
	maxID := -1
	for tok, id := range vocab {
		if id < 0 || id >= maxVocab {
			return nil, fmt.Errorf("model BPE: token %q has id %d, outside [0, %d)", tok, id, maxVocab)
		}
		if len(tok) == 0 || len(tok) > maxTokenBytes {
			return nil, fmt.Errorf("model BPE: token of id %d is %d bytes long (want 1 to %d)", id, len(tok), maxTokenBytes)
		}
		m.vocab[tok] = int32(id)
		maxID = max(maxID, id)
	}
	m.tokens = make([]string, maxID+1)
	m.has = make([]bool, maxID+1)
	for tok, id := range vocab {
		if m.has[id] {
			return nil, fmt.Errorf("model BPE: id %d is given to two tokens, %q and %q", id, m.tokens[id], tok)
		}
		m.tokens[id], m.has[id] = tok, true
	}
	for i, e := range merges {
		a, oka := m.vocab[e[0]]
		b, okb := m.vocab[e[1]]
		c, okc := m.vocab[e[0]+e[1]]
		switch {
		case !oka:
			return nil, fmt.Errorf("model BPE: merge %d (%q %q): %q is not in the vocabulary", i, e[0], e[1], e[0])
		case !okb:
			return nil, fmt.Errorf("model BPE: merge %d (%q %q): %q is not in the vocabulary", i, e[0], e[1], e[1])
		case !okc:
			return nil, fmt.Errorf("model BPE: merge %d (%q %q): the merged token %q is not in the vocabulary", i, e[0], e[1], e[0]+e[1])
		}
		m.merges[pairKey(a, b)] = merged{rank: int32(i), id: c}
	}
	if j.UnkToken != nil {
		id, ok := m.vocab[*j.UnkToken]
		if !ok {
			return nil, fmt.Errorf("model BPE: unk_token %q is not in the vocabulary", *j.UnkToken)
		}
		m.unk = id
	}
	for b := range 256 {
		m.fallbackID[b] = -1
		if id, ok := m.vocab[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.fallbackID[b] = id
		}
	}
	if _, ok := m.vocab[metaspace]; ok && !byteMode {
		m.cut = metaspace
		for tok := range m.vocab {
			if hasInnerMetaspace(tok) {
				m.cut = ""
				break
			}
		}
	}
	if byteMode {
		m.byteVocab = make(map[string]int32, len(m.vocab))
		for tok, id := range m.vocab {
			if b, ok := unmapBytes(tok); ok {
				m.byteVocab[string(b)] = id
			}
		}
		for b := range 256 {
			m.byteID[b] = -1
			if id, ok := m.vocab[string(byteRune[b])]; ok {
				m.byteID[b] = id
			}
		}
	}
	return m, nil
}

// metaspace is U+2581, SentencePiece's stand-in for a space.
const metaspace = "\u2581"

// hasInnerMetaspace reports whether tok has "▁" right after a character
// that is not "▁".
func hasInnerMetaspace(tok string) bool {
	for i := 1; i < len(tok); i++ {
		if strings.HasPrefix(tok[i:], metaspace) && !strings.HasSuffix(tok[:i], metaspace) {
			return true
		}
	}
	return false
}
