package data

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// BPE is a byte-level byte-pair-encoding tokenizer (GPT-2's scheme without
// its byte-to-unicode remapping): ids 0-255 are the bytes, and id 256+i is
// the i-th merge of two earlier ids. Text is first cut into chunks (a word
// with its leading space, a number, a run of punctuation, a run of
// whitespace) and merges never cross chunk boundaries.
type BPE struct {
	merges [][2]int
	rank   map[[2]int]int // pair → merge index
	bytes  [][]byte       // id → the bytes it stands for
}

// BPETrainBytes bounds the text TrainBPE learns merges from: longer corpora
// are sampled in evenly spaced windows of this total size.
const BPETrainBytes = 2 << 20

// TrainBPE learns up to vocabSize-256 merges from text, most frequent pair
// first (ties broken by the smaller pair, so training is deterministic). It
// stops early when no pair occurs twice.
func TrainBPE(text []byte, vocabSize int) (*BPE, error) {
	if vocabSize < 256 || vocabSize > 1<<16 {
		return nil, fmt.Errorf("--vocab_size %d out of range for the bpe tokenizer (want 256 to 65536)", vocabSize)
	}
	// Count the chunks of (a sample of) the text.
	counts := map[string]int{}
	for _, part := range sampleWindows(text, BPETrainBytes, 64) {
		for s := part; len(s) > 0; {
			n := chunkLen(s)
			counts[string(s[:n])]++
			s = s[n:]
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	type word struct {
		sym []int
		n   int
	}
	words := make([]word, len(keys))
	pairs := map[[2]int]int{}
	where := map[[2]int][]int{}
	for i, k := range keys {
		w := word{sym: make([]int, len(k)), n: counts[k]}
		for j := range len(k) {
			w.sym[j] = int(k[j])
		}
		words[i] = w
		for j := 0; j+1 < len(w.sym); j++ {
			p := [2]int{w.sym[j], w.sym[j+1]}
			pairs[p] += w.n
			where[p] = append(where[p], i)
		}
	}
	var merges [][2]int
	for len(merges) < vocabSize-256 {
		best, bestN := [2]int{}, 1
		for p, n := range pairs {
			if n > bestN || (n == bestN && n > 1 && (p[0] < best[0] || (p[0] == best[0] && p[1] < best[1]))) {
				best, bestN = p, n
			}
		}
		if bestN < 2 {
			break
		}
		id := 256 + len(merges)
		merges = append(merges, best)
		ws := where[best]
		delete(where, best)
		for k, wi := range ws {
			if k > 0 && ws[k-1] == wi {
				continue // listed once per occurrence
			}
			w := &words[wi]
			if !slices.Contains(pairsOf(w.sym), best) {
				continue
			}
			for j := 0; j+1 < len(w.sym); j++ {
				p := [2]int{w.sym[j], w.sym[j+1]}
				if pairs[p] -= w.n; pairs[p] <= 0 {
					delete(pairs, p)
				}
			}
			w.sym = mergePair(w.sym, best, id)
			for j := 0; j+1 < len(w.sym); j++ {
				p := [2]int{w.sym[j], w.sym[j+1]}
				pairs[p] += w.n
				if l := where[p]; len(l) == 0 || l[len(l)-1] != wi {
					where[p] = append(l, wi)
				}
			}
		}
	}
	return newBPE(merges)
}

func pairsOf(sym []int) [][2]int {
	out := make([][2]int, 0, len(sym))
	for j := 0; j+1 < len(sym); j++ {
		out = append(out, [2]int{sym[j], sym[j+1]})
	}
	return out
}

// mergePair replaces each non-overlapping occurrence of p in sym, left to
// right, by id.
func mergePair(sym []int, p [2]int, id int) []int {
	out := sym[:0]
	for j := 0; j < len(sym); j++ {
		if j+1 < len(sym) && sym[j] == p[0] && sym[j+1] == p[1] {
			out = append(out, id)
			j++
			continue
		}
		out = append(out, sym[j])
	}
	return out
}

// sampleWindows returns text when it is at most total bytes long, and
// otherwise n evenly spaced windows of total/n bytes, each cut back to
// start and end at a line boundary where possible.
func sampleWindows(text []byte, total, n int) [][]byte {
	if len(text) <= total {
		return [][]byte{text}
	}
	size := total / n
	var out [][]byte
	for i := range n {
		start := int(int64(i) * int64(len(text)-size) / int64(n-1))
		w := text[start : start+size]
		if j := strings.IndexByte(string(w), '\n'); j >= 0 && i > 0 {
			w = w[j+1:]
		}
		out = append(out, w)
	}
	return out
}

func newBPE(merges [][2]int) (*BPE, error) {
	b := &BPE{merges: merges, rank: make(map[[2]int]int, len(merges)), bytes: make([][]byte, 256, 256+len(merges))}
	for i := range 256 {
		b.bytes[i] = []byte{byte(i)}
	}
	for i, m := range merges {
		id := 256 + i
		if m[0] < 0 || m[1] < 0 || m[0] >= id || m[1] >= id {
			return nil, fmt.Errorf("tokenizer: bpe merge %d (%d, %d) refers to an undefined id", i, m[0], m[1])
		}
		if _, dup := b.rank[m]; dup {
			return nil, fmt.Errorf("tokenizer: bpe merge %d (%d, %d) is repeated", i, m[0], m[1])
		}
		b.rank[m] = i
		b.bytes = append(b.bytes, append(slices.Clip(b.bytes[m[0]]), b.bytes[m[1]]...))
	}
	if len(b.bytes) > 1<<16 {
		return nil, fmt.Errorf("tokenizer: bpe vocabulary of %d ids is too large", len(b.bytes))
	}
	return b, nil
}

// Kind returns "bpe".
func (b *BPE) Kind() string { return "bpe" }

// VocabSize returns 256 plus the number of merges.
func (b *BPE) VocabSize() int { return len(b.bytes) }

// Encode returns the ids of text; any bytes can be encoded.
func (b *BPE) Encode(text []byte) (*Tokens, error) {
	out := newTokens(b.VocabSize(), len(text)/3+16)
	cache := map[string][]int{}
	var sym []int
	for s := text; len(s) > 0; {
		n := chunkLen(s)
		chunk := s[:n]
		s = s[n:]
		ids, ok := cache[string(chunk)]
		if !ok {
			sym = b.encodeChunk(chunk, sym[:0])
			ids = slices.Clone(sym)
			if len(cache) >= 1<<20 {
				clear(cache)
			}
			cache[string(chunk)] = ids
		}
		for _, id := range ids {
			out.append(id)
		}
	}
	return out, nil
}

// encodeChunk applies the merges to the bytes of one chunk, lowest rank
// first, appending the ids to sym.
func (b *BPE) encodeChunk(chunk []byte, sym []int) []int {
	for _, c := range chunk {
		sym = append(sym, int(c))
	}
	for len(sym) > 1 {
		best, bestRank := [2]int{}, len(b.merges)
		for j := 0; j+1 < len(sym); j++ {
			p := [2]int{sym[j], sym[j+1]}
			if r, ok := b.rank[p]; ok && r < bestRank {
				best, bestRank = p, r
			}
		}
		if bestRank == len(b.merges) {
			break
		}
		sym = mergePair(sym, best, 256+bestRank)
	}
	return sym
}

// Decode returns the text of ids, with invalid UTF-8 replaced by U+FFFD.
func (b *BPE) Decode(ids []int) string {
	var buf []byte
	for _, id := range ids {
		if id >= 0 && id < len(b.bytes) {
			buf = append(buf, b.bytes[id]...)
		}
	}
	return strings.ToValidUTF8(string(buf), "\uFFFD")
}

// MarshalJSON returns {"kind":"bpe","merges":[[a,b],...]}.
func (b *BPE) MarshalJSON() ([]byte, error) {
	m := b.merges
	if m == nil {
		m = [][2]int{}
	}
	return json.Marshal(tokenizerJSON{Kind: "bpe", Merges: m})
}

// Byte classes of the pre-tokenizer. Bytes ≥ 0x80 count as letters, so
// multi-byte characters stay inside words.
const (
	clLetter = iota
	clDigit
	clSpace
	clPunct
)

func byteClass(c byte) int {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c >= 0x80:
		return clLetter
	case c >= '0' && c <= '9':
		return clDigit
	case c == ' ', c == '\n', c == '\t', c == '\r', c == '\v', c == '\f':
		return clSpace
	}
	return clPunct
}

// chunkLen returns the length of the chunk at the start of s (len(s) > 0),
// in the spirit of GPT-2's pattern: an optional space followed by a run of
// letters, digits or punctuation; or a run of whitespace that leaves its
// last space to the word after it.
func chunkLen(s []byte) int {
	i := 0
	if s[0] == ' ' && len(s) > 1 && byteClass(s[1]) != clSpace {
		i = 1
	}
	cl := byteClass(s[i])
	j := i + 1
	for j < len(s) && byteClass(s[j]) == cl {
		j++
	}
	if cl == clSpace && j-i > 1 && j < len(s) && s[j-1] == ' ' {
		j-- // the space goes with the next word
	}
	return j
}
