package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/wickml/wick/internal/boundedread"
	"github.com/wickml/wick/tokenizer/internal/gpt2vocab"
)

// EndOfText is GPT-2's "<|endoftext|>" token.
const EndOfText = "<|endoftext|>"

// GPT2 is GPT-2's byte-level BPE tokenizer (tiktoken's "gpt2" encoding),
// made by LoadGPT2 or Unmarshal: the zero GPT2 has no vocabulary, and its
// Encode panics. Its methods may be called from many goroutines at once.
type GPT2 struct {
	// merges are the lines of the merges file, in rank order, for
	// MarshalJSON.
	merges []string
	// encoder maps the bytes of every byte and merged token to its id.
	encoder map[string]int32
	// decoder maps every id to its bytes.
	decoder [][]byte
	// byteID is the id of each single-byte token.
	byteID [256]int32
	// pairs maps two tokens x, y whose concatenation xy is a merged token
	// of at most pairSplitMax bytes to xy's rank and id; pair looks longer
	// ones up in encoder and rankOf.
	pairs map[uint64]merged
	// rankOf is the rank of each id that a merge makes (noRank for the
	// others).
	rankOf []int32
	// specials are the tokens that are neither bytes nor merges
	// (<|endoftext|>): found in the text as they are, never merged.
	specials []special
	cache    *wordCache
}

type special struct {
	text string
	id   int
}

var _ Tokenizer = (*GPT2)(nil)

// MaxGPT2FileBytes bounds each file LoadGPT2 reads (GPT-2's are 1 MB and
// 456 KB, a vocabulary of 150,000 tokens 3 MB): a larger file is refused
// before it is read.
const MaxGPT2FileBytes = 32 << 20

// MaxSpecialTokens bounds the tokens of a GPT-2 vocabulary that no merge
// makes (GPT-2 has one, <|endoftext|>).
const MaxSpecialTokens = 1024

// LoadGPT2 reads GPT-2's tokenizer from dir, which holds either Hugging
// Face's vocab.json and merges.txt or OpenAI's encoder.json and vocab.bpe
// (the same content under other names). Errors name the file at fault,
// and the line for a merges file: each file is at most MaxGPT2FileBytes;
// every merge joins two tokens of the vocabulary made before it into a
// token of the vocabulary; and every token of the vocabulary is a byte,
// made by a merge, or a special token written like one (<|endoftext|>,
// <s>, [CLS]), at most MaxSpecialTokens of those, so that a truncated or
// empty merges file is an error naming its last line. Loading takes time
// and memory linear in the files' size.
func LoadGPT2(dir string) (*GPT2, error) {
	vocabPath, mergesPath, err := findGPT2Files(dir)
	if err != nil {
		return nil, err
	}
	vb, err := boundedread.ReadFile(vocabPath, MaxGPT2FileBytes, "a tokenizer's vocabulary")
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	mb, err := boundedread.ReadFile(mergesPath, MaxGPT2FileBytes, "a tokenizer's merges")
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return parseGPT2(vb, mb, vocabPath, mergesPath)
}

// NewGPT2 returns GPT-2's tokenizer (tiktoken's "gpt2" encoding) from the
// copy of OpenAI's encoder.json and vocab.bpe that Wick embeds (compressed:
// about 550 KB of a binary that calls NewGPT2), so that it needs no files:
// the tokenizer LoadGPT2 reads from those files. The vocabulary is
// OpenAI's, under its Modified MIT License (Software Copyright (c) 2019
// OpenAI), reproduced in tokenizer/internal/gpt2vocab/LICENSE.
//
// The first call builds the vocabulary's tables, which takes a few hundred
// milliseconds; later calls share them (they never change) and return at
// once, each tokenizer with a word cache of its own. One tokenizer also
// serves any number of goroutines.
func NewGPT2() *GPT2 {
	embedded.once.Do(func() {
		vb, err := gpt2vocab.EncoderJSON()
		if err == nil {
			var mb []byte
			if mb, err = gpt2vocab.VocabBPE(); err == nil {
				embedded.g, err = parseGPT2(vb, mb, "embedded encoder.json", "embedded vocab.bpe")
			}
		}
		embedded.err = err
	})
	if embedded.err != nil {
		// The embedded files are part of the source tree and tested: an
		// error here means a broken build, not bad input.
		panic(fmt.Errorf("tokenizer: NewGPT2: the embedded vocabulary is broken: %w", embedded.err))
	}
	c := *embedded.g
	c.cache = newWordCache()
	return &c
}

// embedded is the tokenizer of the embedded vocabulary, built by the first
// NewGPT2 and never changed after: NewGPT2 returns copies with caches of
// their own.
var embedded struct {
	once sync.Once
	g    *GPT2
	err  error
}

// parseGPT2 builds the tokenizer from the bytes of a vocabulary file
// (JSON: token → id) and of a merges file; the names are for errors.
func parseGPT2(vocabFile, mergesFile []byte, vocabName, mergesName string) (*GPT2, error) {
	var vocab map[string]int
	if err := json.Unmarshal(vocabFile, &vocab); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: not a JSON object of token ids: %w", vocabName, err)
	}
	merges, lines, err := parseMerges(string(mergesFile), mergesName)
	if err != nil {
		return nil, err
	}
	where := func(i int) string {
		if i < 0 { // the end of the file
			if len(lines) == 0 {
				return mergesName + " (which holds no merges)"
			}
			return fmt.Sprintf("%s (whose last merge is line %d)", mergesName, lines[len(lines)-1])
		}
		return fmt.Sprintf("%s line %d", mergesName, lines[i])
	}
	return newGPT2(vocab, merges, vocabName, where)
}

// findGPT2Files returns the paths of the vocabulary and merges files in dir.
func findGPT2Files(dir string) (vocab, merges string, err error) {
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	for _, names := range [][2]string{{"vocab.json", "merges.txt"}, {"encoder.json", "vocab.bpe"}} {
		v, m := exists(names[0]), exists(names[1])
		switch {
		case v && m:
			return filepath.Join(dir, names[0]), filepath.Join(dir, names[1]), nil
		case v || m:
			missing := names[0]
			if v {
				missing = names[1]
			}
			return "", "", fmt.Errorf("tokenizer: %w", &fs.PathError{Op: "open", Path: filepath.Join(dir, missing), Err: fs.ErrNotExist})
		}
	}
	if _, err := os.Stat(dir); err != nil {
		return "", "", fmt.Errorf("tokenizer: %w", err)
	}
	return "", "", fmt.Errorf("tokenizer: %s holds neither vocab.json and merges.txt nor encoder.json and vocab.bpe", dir)
}

// parseMerges returns the merges of a merges file ("#version" line, then
// one "left right" pair per line, in rank order) and the line number of
// each.
func parseMerges(text, name string) ([]string, []int, error) {
	var merges []string
	var lines []int
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || i == 0 && strings.HasPrefix(line, "#version") {
			continue
		}
		if strings.Count(line, " ") != 1 || line[0] == ' ' || line[len(line)-1] == ' ' {
			return nil, nil, fmt.Errorf("tokenizer: %s line %d: %q is not two tokens separated by a space", name, i+1, line)
		}
		merges = append(merges, line)
		lines = append(lines, i+1)
	}
	return merges, lines, nil
}

// pairSplitMax is the length up to which newGPT2 lists every split of a
// merged token in pairs; pair finds the splits of longer ones through
// encoder. Listing them all costs the square of a token's length, which a
// vocabulary of long merge chains (a, aa, aaa, …) makes quadratic in the
// file's size.
const pairSplitMax = 64

// looksSpecial reports whether tok, a token no merge makes, is written
// like a special token: <…> or […], as GPT-2's <|endoftext|>, RoBERTa's
// <s> or BERT's [CLS].
func looksSpecial(tok string) bool {
	return len(tok) >= 3 && (tok[0] == '<' && tok[len(tok)-1] == '>' || tok[0] == '[' && tok[len(tok)-1] == ']')
}

// newGPT2 builds the tokenizer from the contents of the vocabulary file
// (token → id) and of the merges file; vocabName and where (merge i's
// place in its file, or the file's end for i < 0) are for error messages.
func newGPT2(vocab map[string]int, merges []string, vocabName string, where func(i int) string) (*GPT2, error) {
	n := len(vocab)
	g := &GPT2{
		merges:  merges,
		encoder: make(map[string]int32, n),
		decoder: make([][]byte, n),
		rankOf:  make([]int32, n),
		cache:   newWordCache(),
	}
	for i := range g.rankOf {
		g.rankOf[i] = noRank
	}
	for tok, id := range vocab {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("tokenizer: %s: id %d of %q is out of range (%d tokens need ids 0 to %d)", vocabName, id, tok, n, n-1)
		}
		if g.decoder[id] != nil {
			return nil, fmt.Errorf("tokenizer: %s: id %d is given to two tokens", vocabName, id)
		}
		b, ok := unmapBytes(tok)
		if !ok || len(b) == 0 {
			return nil, fmt.Errorf("tokenizer: %s: token %q is not in GPT-2's byte-level form", vocabName, tok)
		}
		g.decoder[id] = b
	}
	for c := range 256 {
		id, ok := vocab[string(byteRune[c])]
		if !ok {
			return nil, fmt.Errorf("tokenizer: %s: byte %#02x (%q) has no token", vocabName, c, byteRune[c])
		}
		g.byteID[c] = int32(id)
		g.encoder[string([]byte{byte(c)})] = int32(id)
	}
	var short []string // the merged tokens of at most pairSplitMax bytes
	for i, m := range merges {
		left, right, ok := strings.Cut(m, " ")
		if !ok || left == "" || right == "" || strings.Contains(right, " ") {
			return nil, fmt.Errorf("tokenizer: %s: %q is not two tokens separated by a space", where(i), m)
		}
		l, okl := unmapBytes(left)
		r, okr := unmapBytes(right)
		if !okl || !okr {
			return nil, fmt.Errorf("tokenizer: %s: merge %q is not in GPT-2's byte-level form", where(i), m)
		}
		if _, ok := g.encoder[string(l)]; !ok {
			return nil, fmt.Errorf("tokenizer: %s: merge %q uses %q before any merge makes it", where(i), m, left)
		}
		if _, ok := g.encoder[string(r)]; !ok {
			return nil, fmt.Errorf("tokenizer: %s: merge %q uses %q before any merge makes it", where(i), m, right)
		}
		tok := left + right
		id, ok := vocab[tok]
		if !ok {
			return nil, fmt.Errorf("tokenizer: %s: merge %q makes %q, which %s does not have", where(i), m, tok, vocabName)
		}
		b := string(l) + string(r)
		if _, dup := g.encoder[b]; dup {
			return nil, fmt.Errorf("tokenizer: %s: merge %q makes %q a second time", where(i), m, tok)
		}
		g.encoder[b] = int32(id)
		g.rankOf[id] = int32(256 + i)
		if len(b) <= pairSplitMax {
			short = append(short, b)
		}
	}
	for id, b := range g.decoder {
		if _, ok := g.encoder[string(b)]; !ok {
			tok := mapBytes(b)
			if !looksSpecial(tok) {
				return nil, fmt.Errorf("tokenizer: %s: token %q (id %d) of %s is made by no merge, and is not written like a special token (<…> or […]): the merges file is truncated or belongs to another vocabulary", where(-1), tok, id, vocabName)
			}
			if len(g.specials) == MaxSpecialTokens {
				return nil, fmt.Errorf("tokenizer: %s: more than %d tokens of %s are made by no merge (special tokens)", where(-1), MaxSpecialTokens, vocabName)
			}
			g.specials = append(g.specials, special{text: string(b), id: id})
		}
	}
	// Every split of a merged token into two tokens is a pair that merges
	// into it (tiktoken ranks the concatenated bytes, not the merge line).
	g.pairs = make(map[uint64]merged, 4*len(short))
	for _, b := range short {
		id := g.encoder[b]
		for k := 1; k < len(b); k++ {
			l, okl := g.encoder[b[:k]]
			rr, okr := g.encoder[b[k:]]
			if okl && okr {
				g.pairs[pairKey(l, rr)] = merged{rank: g.rankOf[id], id: id}
			}
		}
	}
	return g, nil
}

// Kind returns "gpt2".
func (g *GPT2) Kind() string { return "gpt2" }

// VocabSize returns the number of tokens: 50257 for GPT-2.
func (g *GPT2) VocabSize() int { return len(g.decoder) }

// Encode returns the ids of text, with "<|endoftext|>" (and any other
// special token of the vocabulary) found in the text encoded as its id:
// tiktoken's encode(text, allowed_special="all"). Bytes of text that are not
// valid UTF-8 are encoded like punctuation, so DecodeBytes gives them back.
func (g *GPT2) Encode(text string) []int {
	out := make([]int, 0, len(text)/4+4)
	for len(text) > 0 {
		at, sp := g.nextSpecial(text)
		if at < 0 {
			break
		}
		out = g.appendOrdinary(out, text[:at])
		out = append(out, sp.id)
		text = text[at+len(sp.text):]
	}
	return g.appendOrdinary(out, text)
}

// EncodeOrdinary returns the ids of text with special tokens treated as
// ordinary text (tiktoken's encode_ordinary): "<|endoftext|>" becomes the
// ids of "<|", "endoftext" and "|>".
func (g *GPT2) EncodeOrdinary(text string) []int {
	return g.appendOrdinary(make([]int, 0, len(text)/4+4), text)
}

// nextSpecial returns where the first special token of text starts, and
// which it is (the longest, where two start at the same place), or -1.
func (g *GPT2) nextSpecial(text string) (int, special) {
	at, sp := -1, special{}
	for _, s := range g.specials {
		i := strings.Index(text, s.text)
		if i >= 0 && (at < 0 || i < at || i == at && len(s.text) > len(sp.text)) {
			at, sp = i, s
		}
	}
	return at, sp
}

// appendOrdinary appends the ids of text, without special tokens, to out.
func (g *GPT2) appendOrdinary(out []int, text string) []int {
	for len(text) > 0 {
		n := pieceLen(text)
		piece := text[:n]
		text = text[n:]
		if id, ok := g.encoder[piece]; ok {
			out = append(out, int(id))
			continue
		}
		if n > cacheMaxPiece {
			out = g.appendMerged(out, piece)
			continue
		}
		sh := g.cache.shard(piece)
		if ids, ok := g.cache.get(sh, piece); ok {
			out = append(out, ids...)
			continue
		}
		k := len(out)
		out = g.appendMerged(out, piece)
		g.cache.put(sh, piece, append([]int(nil), out[k:]...))
	}
	return out
}

// DecodeBytes returns the bytes of ids. Ids that cut a character in two
// give its bytes as they are, so the decodings of consecutive slices of ids
// concatenate to the decoding of the whole; ids outside the vocabulary give
// the bytes of U+FFFD.
func (g *GPT2) DecodeBytes(ids []int) []byte {
	var out []byte
	for _, id := range ids {
		if id >= 0 && id < len(g.decoder) {
			out = append(out, g.decoder[id]...)
		} else {
			out = utf8.AppendRune(out, utf8.RuneError)
		}
	}
	return out
}

// Decode returns the text of ids, with ids outside the vocabulary and runs
// of bytes that are not valid UTF-8 (ids that cut a character in two)
// replaced by U+FFFD. Decode(Encode(s)) == s for every valid UTF-8 s.
func (g *GPT2) Decode(ids []int) string {
	b := g.DecodeBytes(ids)
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// gpt2JSON is the saved form of GPT2: the contents of Hugging Face's
// vocab.json and merges.txt.
type gpt2JSON struct {
	Kind   string         `json:"kind"`
	Vocab  map[string]int `json:"vocab"`
	Merges []string       `json:"merges"`
}

// MarshalJSON returns {"kind":"gpt2","vocab":{...},"merges":[...]}: the
// whole vocabulary (about 1.5 MB for GPT-2), so that a checkpoint needs no
// other file.
func (g *GPT2) MarshalJSON() ([]byte, error) {
	v := make(map[string]int, len(g.decoder))
	for id, b := range g.decoder {
		v[mapBytes(b)] = id
	}
	return json.Marshal(gpt2JSON{Kind: "gpt2", Vocab: v, Merges: g.merges})
}

func unmarshalGPT2(b []byte) (*GPT2, error) {
	var j gpt2JSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("tokenizer: gpt2: %w", err)
	}
	if len(j.Vocab) == 0 {
		return nil, errors.New("tokenizer: gpt2: the saved vocabulary is empty")
	}
	where := func(i int) string {
		if i < 0 {
			return fmt.Sprintf("saved merges (%d of them)", len(j.Merges))
		}
		return fmt.Sprintf("saved merge %d", i)
	}
	return newGPT2(j.Vocab, j.Merges, "saved vocab", where)
}
