package data

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

const sampleText = "The river starts in the hills above the town, where the snow lies late.\n" +
	"In April it runs fast and cold; in August, slow and warm — 42 days, 7 hours.\n" +
	"\tfunc main() { fmt.Println(\"héllo, wörld\") }\n"

// TestEncode checks that Encode stores a tokenizer's ids, through
// EncodeEach for char and bpe and through Encode for others, and passes on
// a char vocabulary's error.
func TestEncode(t *testing.T) {
	text := []byte(strings.Repeat(sampleText, 30))
	bpe, err := tokenizer.TrainBPE(text, 400)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []tokenizer.Tokenizer{tokenizer.NewChar(text), bpe, plainTokenizer{tokenizer.NewChar(text)}} {
		ids, err := Encode(t.Context(), tok, text)
		if err != nil || !slices.Equal(ids.Ints(), tok.Encode(string(text))) {
			t.Errorf("%T: Encode differs from the tokenizer's (%v)", tok, err)
		}
	}
	if _, err := Encode(t.Context(), tokenizer.NewChar([]byte("abc")), []byte("abd")); err == nil || !strings.Contains(err.Error(), "'d'") {
		t.Errorf("a character outside the vocabulary: err = %v", err)
	}
}

// plainTokenizer hides its tokenizer's EncodeEach.
type plainTokenizer struct{ tokenizer.Tokenizer }

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

// TestPreparedTokens: the ids of a nanoGPT .bin file, read in place as
// little-endian uint16.
func TestPreparedTokens(t *testing.T) {
	dir := t.TempDir()
	bin := []byte{1, 0, 0xff, 0xff, 2, 1, 7, 0}
	os.WriteFile(filepath.Join(dir, "train.bin"), bin, 0o644)
	os.WriteFile(filepath.Join(dir, "val.bin"), bin[:4], 0o644)
	if !HasPrepared(dir) || HasPrepared(t.TempDir()) {
		t.Fatal("HasPrepared")
	}
	p, err := OpenPrepared(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := p.Train.Ints(); !slices.Equal(got, []int{1, 65535, 258, 7}) || p.Train.Max() != 65535 || p.Val.Len() != 2 || p.Vocab != nil || p.Bytes != 12 {
		t.Errorf("train %v (max %d), val %d ids, vocab %v, %d bytes", got, p.Train.Max(), p.Val.Len(), p.Vocab, p.Bytes)
	}
	if s := p.Train.Slice(1, 3); s.Len() != 2 || s.At(1) != 258 {
		t.Errorf("Slice(1, 3) = %v", s.Ints())
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "train.bin"), bin, 0o644)
	os.WriteFile(filepath.Join(other, "val.bin"), []byte{9, 0, 0, 0}, 0o644)
	q, err := OpenPrepared(other)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if q.CRC32C == p.CRC32C {
		t.Error("two datasets with other ids have the same CRC32C")
	}
}
