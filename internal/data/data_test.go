package data

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"
)

const sampleText = "The river starts in the hills above the town, where the snow lies late.\n" +
	"In April it runs fast and cold; in August, slow and warm — 42 days, 7 hours.\n" +
	"\tfunc main() { fmt.Println(\"héllo, wörld\") }\n"

func TestCharRoundTrip(t *testing.T) {
	c := NewChar([]byte(sampleText))
	ids, err := c.Encode([]byte(sampleText))
	if err != nil {
		t.Fatal(err)
	}
	if ids.Len() != len([]rune(sampleText)) {
		t.Errorf("%d ids for %d runes", ids.Len(), len([]rune(sampleText)))
	}
	if got := c.Decode(ids.Ints()); got != sampleText {
		t.Errorf("round trip: %q", got)
	}
	// Ids follow code point order, like nanoGPT's sorted(set(text)).
	if got := c.Decode([]int{0, 1}); got != "\t\n" {
		t.Errorf("first ids decode to %q, want tab and newline", got)
	}
	if _, err := c.Encode([]byte("snow ☃")); err == nil || !strings.Contains(err.Error(), "'☃'") {
		t.Errorf("unknown character: err = %v", err)
	}
	js, _ := c.MarshalJSON()
	c2, err := UnmarshalTokenizer(js)
	if err != nil || c2.VocabSize() != c.VocabSize() || c2.Decode(ids.Ints()) != sampleText {
		t.Errorf("unmarshal: %v", err)
	}
}

func TestBPE(t *testing.T) {
	text := []byte(strings.Repeat(sampleText, 20))
	b, err := TrainBPE(text, 360)
	if err != nil {
		t.Fatal(err)
	}
	if b.VocabSize() != 360 {
		t.Errorf("vocab %d, want 360", b.VocabSize())
	}
	ids, _ := b.Encode(text)
	if ids.Len() >= len(text)/2 {
		t.Errorf("%d bytes encode to %d tokens: merges barely help", len(text), ids.Len())
	}
	if got := b.Decode(ids.Ints()); got != string(text) {
		t.Errorf("round trip differs")
	}
	// Any bytes encode, even unseen ones.
	other := []byte("unseen ☃ text \x01")
	ids2, err := b.Encode(other)
	if err != nil || b.Decode(ids2.Ints()) != string(other) {
		t.Errorf("unseen text: %v", err)
	}
	// Training is deterministic and the JSON form round-trips.
	b2, _ := TrainBPE(text, 360)
	js1, _ := b.MarshalJSON()
	js2, _ := b2.MarshalJSON()
	if !bytes.Equal(js1, js2) {
		t.Error("two trainings on one text differ")
	}
	b3, err := UnmarshalTokenizer(js1)
	if err != nil {
		t.Fatal(err)
	}
	ids3, _ := b3.Encode(text)
	if !slices.Equal(ids.Ints(), ids3.Ints()) {
		t.Error("unmarshalled tokenizer encodes differently")
	}
	// A tiny text runs out of pairs before the vocabulary is full.
	small, _ := TrainBPE([]byte("abab"), 1000)
	if small.VocabSize() != 257 {
		t.Errorf("vocab of \"abab\" = %d, want 257 (one merge)", small.VocabSize())
	}
	if _, err := TrainBPE(text, 100); err == nil {
		t.Error("vocab_size 100 accepted")
	}
	if _, err := UnmarshalTokenizer([]byte(`{"kind":"bpe","merges":[[300,1]]}`)); err == nil {
		t.Error("merge of an undefined id accepted")
	}
}

func TestChunks(t *testing.T) {
	s := []byte("  hello world,  42x\n\tfoo")
	var got []string
	for len(s) > 0 {
		n := chunkLen(s)
		got = append(got, string(s[:n]))
		s = s[n:]
	}
	want := []string{" ", " hello", " world", ",", " ", " 42", "x", "\n\t", "foo"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("chunks %q, want %q", got, want)
	}
}

func TestTokensSplitSampler(t *testing.T) {
	ids := make([]int, 100)
	for i := range ids {
		ids[i] = i
	}
	for _, vocab := range []int{100, 1 << 17} {
		tok := TokensFromInts(ids, vocab)
		if tok.Len() != 100 || tok.At(99) != 99 {
			t.Errorf("vocab %d: len %d", vocab, tok.Len())
		}
		train, val, err := Split(tok, 0.9, 5)
		if err != nil || train.Len() != 90 || val.Len() != 10 || val.At(0) != 90 {
			t.Errorf("split: %v %d %d", err, train.Len(), val.Len())
		}
		if _, _, err := Split(tok, 0.9, 11); err == nil || !strings.Contains(err.Error(), "block_size+1 = 11") {
			t.Errorf("short split: %v", err)
		}
		s := NewSampler(train, 3, 4, tensor.NewGenerator(1))
		x, y := s.Next()
		for b := range 3 {
			for j := range 4 {
				if y[b*4+j] != x[b*4+j]+1 || (j > 0 && x[b*4+j] != x[b*4+j-1]+1) || x[b*4+j] > 88 {
					t.Fatalf("batch row %d: x %v y %v", b, x[b*4:b*4+4], y[b*4:b*4+4])
				}
			}
		}
		// Restoring the generator's state repeats the batches.
		st := s.Generator().State()
		x1, _ := s.Next()
		s.Generator().SetState(st)
		x2, _ := s.Next()
		if !slices.Equal(x1, x2) {
			t.Error("restored sampler draws other batches")
		}
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	c, err := Open(write("ok.txt", []byte(sampleText)))
	if err != nil || string(c.Text) != sampleText {
		t.Fatalf("open: %v", err)
	}
	c.Close()
	for name, tc := range map[string]struct {
		content []byte
		want    string
	}{
		"empty.txt":  {nil, "is empty"},
		"nul.bin":    {[]byte("ab\x00c"), "NUL byte at offset 2"},
		"latin1.txt": {[]byte("caf\xe9"), "invalid byte 0xe9 at offset 3"},
	} {
		_, err := Open(write(name, tc.content))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing: %v", err)
	}
}

func TestDefaultCorpus(t *testing.T) {
	root := GoRoot()
	if root == "" {
		t.Fatal("no GOROOT with a src directory; the default corpus needs the Go installation that runs this test")
	}
	c, err := DefaultCorpus(root, 300<<10)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Text) == 0 || len(c.Text) > 300<<10 || !bytes.Contains(c.Text, []byte("package ")) {
		t.Errorf("default corpus: %d bytes", len(c.Text))
	}
	if err := CheckText(c.Text); err != nil {
		t.Error(err)
	}
	c2, _ := DefaultCorpus(root, 300<<10)
	if !bytes.Equal(c.Text, c2.Text) {
		t.Error("default corpus is not deterministic")
	}
	if _, err := DefaultCorpus("", 1000); err == nil {
		t.Error("no GOROOT accepted")
	}
}
