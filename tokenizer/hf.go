package tokenizer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// HF is a tokenizer defined by a Hugging Face tokenizer.json file (the
// format of the tokenizers library), made by LoadPretrained,
// LoadTokenizerJSON or ParseTokenizerJSON. It supports what the Llama,
// Mistral, SmolLM and Qwen families ship: BPE models over byte-level
// pre-tokenization (GPT-2's, Llama 3's and Qwen's split patterns) or in
// SentencePiece's style (Prepend and Replace normalizers or a Metaspace
// pre-tokenizer, byte fallback), NFC, added and special tokens, and the
// TemplateProcessing post-processor. Its methods may be called from many
// goroutines at once.
type HF struct {
	raw []byte // the tokenizer.json, for MarshalJSON

	added      *addedVocab
	normalizer normalizer   // nil: none
	pre        []preStep    // the pre-tokenizer's steps, in order
	byteLevel  *byteLevelPT // the ByteLevel step that ends pre, if any
	model      *hfBPE
	post       []postStep // nil: no post-processor
	decoders   []decoder  // nil: no decoder (tokens joined by spaces)
	vocabSize  int
	cache      *wordCache
}

var _ Tokenizer = (*HF)(nil)

// Limits on what a tokenizer.json may hold, so that a corrupt or hostile
// file cannot make the loader take unbounded memory.
const (
	maxTokenizerJSON = 256 << 20 // bytes of tokenizer.json
	maxVocab         = 1 << 21   // tokens of the model's vocabulary
	maxMerges        = 1 << 22   // merges of a BPE model
	maxAdded         = 1 << 16   // added tokens
	maxTokenBytes    = 1024      // bytes of one token
)

// LoadPretrained returns the tokenizer of a Hugging Face model directory:
// the one its tokenizer.json defines when it has one (LoadTokenizerJSON),
// else GPT-2's from vocab.json and merges.txt (or encoder.json and
// vocab.bpe; LoadGPT2).
func LoadPretrained(dir string) (Tokenizer, error) {
	p := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(p); err == nil {
		return LoadTokenizerJSON(p)
	}
	return LoadGPT2(dir)
}

// LoadTokenizerJSON reads a tokenizer.json file (or a gzip-compressed one,
// whose name ends in ".gz"). Errors name the file, and the component when
// it is one the package does not support (a Unigram or WordPiece model, an
// unknown normalizer, pre-tokenizer, post-processor or decoder).
func LoadTokenizerJSON(path string) (*HF, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
		}
		r = z
	}
	b, err := io.ReadAll(io.LimitReader(r, maxTokenizerJSON+1))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	if len(b) > maxTokenizerJSON {
		return nil, fmt.Errorf("tokenizer: %s: larger than %d MiB", path, maxTokenizerJSON>>20)
	}
	t, err := ParseTokenizerJSON(b)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %s", path, strings.TrimPrefix(err.Error(), "tokenizer: "))
	}
	return t, nil
}

// ParseTokenizerJSON makes the tokenizer that the contents of a
// tokenizer.json file define.
func ParseTokenizerJSON(b []byte) (*HF, error) {
	if len(b) > maxTokenizerJSON {
		return nil, fmt.Errorf("tokenizer: tokenizer.json is larger than %d MiB", maxTokenizerJSON>>20)
	}
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		return nil, fmt.Errorf("tokenizer: not JSON: %w", err)
	}
	t, err := buildHF(bytes.Clone(b))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return t, nil
}

// Kind returns "hf".
func (t *HF) Kind() string { return "hf" }

// VocabSize returns one more than the largest id, of the model's
// vocabulary or of an added token: every id is in [0, VocabSize).
func (t *HF) VocabSize() int { return t.vocabSize }

// TokenToID returns the id of a token (an added token's content, or a
// token of the model's vocabulary as the file writes it: "Ġthe" in a
// byte-level vocabulary, "▁the" in a SentencePiece one), and false when
// there is none.
func (t *HF) TokenToID(token string) (int, bool) {
	if id, ok := t.added.byContent[token]; ok {
		return id, true
	}
	id, ok := t.model.vocab[token]
	return int(id), ok
}

// IDToToken returns the token of id as tokenizer.json writes it, and false
// when id is no token.
func (t *HF) IDToToken(id int) (string, bool) {
	if tok, ok := t.added.byID[id]; ok {
		return tok.decoded, true
	}
	if id >= 0 && id < len(t.model.tokens) && t.model.has[id] {
		return t.model.tokens[id], true
	}
	return "", false
}

// Encode returns the ids of text as Hugging Face tokenizers' encode(text,
// add_special_tokens=False) gives them: added and special tokens found in
// the text (as the file's flags say) encode as their ids, and the rest goes
// through the normalizer, the pre-tokenizer and the model. Text that is not
// valid UTF-8 is first made valid, each maximal invalid sequence becoming
// U+FFFD (as Python's bytes.decode(errors="replace") does).
func (t *HF) Encode(text string) []int {
	if !utf8.ValidString(text) {
		text = lossyUTF8([]byte(text))
	}
	out := make([]int, 0, len(text)/4+4)
	t.added.split(text, false, func(seg string, id int, first bool) {
		if id >= 0 {
			out = append(out, id)
			return
		}
		if t.normalizer != nil {
			seg = t.normalizer.normalize(seg)
		}
		t.added.split(seg, true, func(seg string, id int, first2 bool) {
			if id >= 0 {
				out = append(out, id)
				return
			}
			out = t.encodeNormalized(out, seg, first && first2)
		})
	})
	return out
}

// EncodeSpecial returns the ids of text with the special tokens of the
// post-processor added: encode(text, add_special_tokens=True) in Hugging
// Face tokenizers, which is how a model's prompt is encoded (with "<s>"
// in front for Llama 2 and Mistral; as Encode for Qwen, whose file adds
// nothing).
func (t *HF) EncodeSpecial(text string) []int {
	ids := t.Encode(text)
	if len(t.post) == 0 {
		return ids
	}
	for _, p := range t.post {
		ids = p.apply(ids)
	}
	return ids
}

// EncodeSpecial returns tok's ids of text with the special tokens that the
// tokenizer adds to a prompt (Hugging Face's add_special_tokens=True): the
// EncodeSpecial method where tok has one (HF), else tok.Encode.
func EncodeSpecial(tok Tokenizer, text string) []int {
	if s, ok := tok.(interface{ EncodeSpecial(string) []int }); ok {
		return s.EncodeSpecial(text)
	}
	return tok.Encode(text)
}

// encodeNormalized appends the ids of seg, a piece of normalized text with
// no added token in it, to out. first tells whether seg starts the text
// (for Metaspace's prepend_scheme "first").
func (t *HF) encodeNormalized(out []int, seg string, first bool) []int {
	if seg == "" {
		return out
	}
	emit := func(piece string) {
		if t.byteLevel != nil {
			t.byteLevel.pieces(piece, func(p string) { out = t.encodePiece(out, p) })
			return
		}
		out = t.encodePiece(out, piece)
	}
	runPre(t.pre, seg, first, emit)
	return out
}

// encodePiece appends the model's ids of one pre-tokenized piece, through
// the word cache.
func (t *HF) encodePiece(out []int, piece string) []int {
	if piece == "" {
		return out
	}
	m := t.model
	if m.ignoreMerges {
		if id, ok := m.lookup(piece); ok {
			return append(out, int(id))
		}
	}
	if m.cut != "" && strings.Contains(piece[1:], m.cut) {
		// Merges never cross these cuts, so the parts merge as the whole
		// would, each through the cache.
		start := 0
		for i := 1; i < len(piece); i++ {
			if piece[i] != m.cut[0] || !strings.HasPrefix(piece[i:], m.cut) || strings.HasSuffix(piece[:i], m.cut) {
				continue
			}
			out = t.encodePart(out, piece[start:i])
			start = i
		}
		return t.encodePart(out, piece[start:])
	}
	return t.encodePart(out, piece)
}

// encodePart appends the model's ids of a piece or part of one, through
// the word cache.
func (t *HF) encodePart(out []int, piece string) []int {
	m := t.model
	if len(piece) > cacheMaxPiece {
		return m.appendWord(out, piece)
	}
	sh := t.cache.shard(piece)
	if ids, ok := t.cache.get(sh, piece); ok {
		return append(out, ids...)
	}
	k := len(out)
	out = m.appendWord(out, piece)
	t.cache.put(sh, piece, append([]int(nil), out[k:]...))
	return out
}

// Decode returns the text of ids as Hugging Face tokenizers' decode(ids,
// skip_special_tokens=False) gives it: each id's token (special tokens
// included) through the file's decoder. Ids that are no token are left
// out, as tokenizers leaves them out.
func (t *HF) Decode(ids []int) string {
	toks := make([]string, 0, len(ids))
	for _, id := range ids {
		if tok, ok := t.IDToToken(id); ok {
			toks = append(toks, tok)
		}
	}
	if t.decoders == nil {
		return strings.Join(toks, " ")
	}
	for _, d := range t.decoders {
		toks = d.decode(toks)
	}
	return strings.Join(toks, "")
}

// hfJSON is the saved form of HF: the tokenizer.json it was made from.
type hfJSON struct {
	Kind      string          `json:"kind"`
	Tokenizer json.RawMessage `json:"tokenizer"`
}

// MarshalJSON returns {"kind":"hf","tokenizer":{...}}, the whole
// tokenizer.json (several MB for the vocabularies of 2024's models), so
// that a checkpoint needs no other file.
func (t *HF) MarshalJSON() ([]byte, error) {
	return json.Marshal(hfJSON{Kind: "hf", Tokenizer: t.raw})
}

func unmarshalHF(b []byte) (*HF, error) {
	var j hfJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("tokenizer: hf: %w", err)
	}
	if len(j.Tokenizer) == 0 {
		return nil, errors.New("tokenizer: hf: the saved tokenizer.json is empty")
	}
	return ParseTokenizerJSON(j.Tokenizer)
}

// lossyUTF8 returns b as a string with each maximal invalid subsequence
// replaced by U+FFFD, as Rust's String::from_utf8_lossy (and Python's
// decode with errors="replace") do: a character cut short is one U+FFFD,
// not one per byte.
func lossyUTF8(b []byte) string {
	var s strings.Builder
	s.Grow(len(b) + 8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r != utf8.RuneError || n > 1 {
			s.Write(b[:n])
			b = b[n:]
			continue
		}
		s.WriteRune(utf8.RuneError)
		b = b[invalidLen(b):]
	}
	return s.String()
}

// invalidLen returns the length of the maximal subpart of a UTF-8 sequence
// at the start of b, which does not start with a valid character: the lead
// byte and those of its continuation bytes that could still be valid.
func invalidLen(b []byte) int {
	c := b[0]
	var n int
	lo, hi := byte(0x80), byte(0xbf)
	switch {
	case c >= 0xc2 && c <= 0xdf:
		n = 2
	case c == 0xe0:
		n, lo = 3, 0xa0
	case c >= 0xe1 && c <= 0xec || c == 0xee || c == 0xef:
		n = 3
	case c == 0xed:
		n, hi = 3, 0x9f
	case c == 0xf0:
		n, lo = 4, 0x90
	case c >= 0xf1 && c <= 0xf3:
		n = 4
	case c == 0xf4:
		n, hi = 4, 0x8f
	default:
		return 1
	}
	i := 1
	for ; i < n && i < len(b); i++ {
		if b[i] < lo || b[i] > hi {
			break
		}
		lo, hi = 0x80, 0xbf
	}
	return i
}
