package tokenizer_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/wickml/wick/tokenizer"
	"github.com/wickml/wick/tokenizer/internal/gpt2vocab"
)

var (
	gpt2Once sync.Once
	gpt2Tok  *tokenizer.GPT2
)

// loadGPT2 returns the embedded GPT-2 tokenizer, made once for all tests.
func loadGPT2(t testing.TB) *tokenizer.GPT2 {
	t.Helper()
	gpt2Once.Do(func() { gpt2Tok = tokenizer.NewGPT2() })
	return gpt2Tok
}

// writeGPT2Files writes the embedded encoder.json and vocab.bpe into dir
// as vocabName and mergesName.
func writeGPT2Files(t *testing.T, dir, vocabName, mergesName string) {
	t.Helper()
	for _, f := range []struct {
		name string
		get  func() ([]byte, error)
	}{{vocabName, gpt2vocab.EncoderJSON}, {mergesName, gpt2vocab.VocabBPE}} {
		b, err := f.get()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// golden is testdata/tokenizer/gpt2.json, written by
// scripts/gen_tokenizer_golden.sh from tiktoken.
type golden struct {
	Whole struct {
		Path      string `json:"path"`
		SHA256    string `json:"sha256"`
		Count     int    `json:"count"`
		IDsSHA256 string `json:"ids_sha256"`
	} `json:"whole"`
	Files []struct {
		Name   string `json:"name"`
		Path   string `json:"path"` // relative to the repository root
		Offset int    `json:"offset"`
		Length int    `json:"length"`
		SHA256 string `json:"sha256"`
		IDs    []int  `json:"ids"`
	} `json:"files"`
	Cases []struct {
		Text string `json:"text"`
		IDs  []int  `json:"ids"`
	} `json:"cases"`
}

func readGolden(t *testing.T) *golden {
	t.Helper()
	b, err := os.ReadFile("../testdata/tokenizer/gpt2.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// readSlice returns length bytes at offset of a file named relative to the
// repository root, and fails if their SHA-256 is not want.
func readSlice(t *testing.T, path string, offset, length int, want string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	if offset+length > len(b) {
		t.Fatalf("%s has %d bytes, want at least %d", path, len(b), offset+length)
	}
	b = b[offset : offset+length]
	if got := sha(b); got != want {
		t.Fatalf("%s[%d:%d] has SHA-256 %s, want %s: not the text the goldens were made from", path, offset, offset+length, got, want)
	}
	return string(b)
}

// diffIDs reports the first difference between got and want, with the text
// of the tokens around it.
func diffIDs(t *testing.T, g *tokenizer.GPT2, name string, got, want []int) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(i-3, 0)
	show := func(ids []int) string {
		hi := min(i+4, len(ids))
		var parts []string
		for _, id := range ids[lo:hi] {
			parts = append(parts, fmt.Sprintf("%d%q", id, g.DecodeBytes([]int{id})))
		}
		return strings.Join(parts, " ")
	}
	t.Errorf("%s: %d ids, want %d; first difference at id %d:\n got  %s\n want %s", name, len(got), len(want), i, show(got), show(want))
}

func TestGPT2Golden(t *testing.T) {
	g := loadGPT2(t)
	gold := readGolden(t)
	total := 0
	for _, f := range gold.Files {
		text := readSlice(t, f.Path, f.Offset, f.Length, f.SHA256)
		total += len(text)
		diffIDs(t, g, f.Name, g.Encode(text), f.IDs)
	}
	for i, c := range gold.Cases {
		total += len(c.Text)
		diffIDs(t, g, fmt.Sprintf("case %d %.60q", i, c.Text), g.Encode(c.Text), c.IDs)
	}
	if total < 200<<10 {
		t.Errorf("the goldens hold %d bytes of text, want at least 200 KB", total)
	}
}

// idsHash is the SHA-256 of ids written one per line, as the generator
// hashes them.
func idsHash(ids []int) string {
	var b []byte
	for _, id := range ids {
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, '\n')
	}
	return sha(b)
}

func TestGPT2GoldenShakespeare(t *testing.T) {
	g := loadGPT2(t)
	w := readGolden(t).Whole
	b, err := os.ReadFile(filepath.Join("..", w.Path))
	if err != nil {
		t.Fatal(err)
	}
	text := readSlice(t, w.Path, 0, len(b), w.SHA256)
	// Twice: the second pass reads merged words from the cache.
	for pass := range 2 {
		ids := g.Encode(text)
		if len(ids) != w.Count || idsHash(ids) != w.IDsSHA256 {
			t.Fatalf("pass %d: tiny Shakespeare encodes to %d ids with hash %s, want %d with hash %s", pass, len(ids), idsHash(ids), w.Count, w.IDsSHA256)
		}
		if got := g.Decode(ids); got != text {
			t.Fatalf("pass %d: decoding tiny Shakespeare does not give it back", pass)
		}
	}
}

func TestGPT2RoundTrip(t *testing.T) {
	g := loadGPT2(t)
	gold := readGolden(t)
	texts := []string{"", "<|endoftext|>", "a<|endoftext|>b<|endoftext|>", strings.Repeat(" ", 300) + "x", strings.Repeat("ab", 400), strings.Repeat("😀", 100)}
	for _, f := range gold.Files {
		texts = append(texts, readSlice(t, f.Path, f.Offset, f.Length, f.SHA256))
	}
	for _, c := range gold.Cases {
		texts = append(texts, c.Text)
	}
	for _, s := range texts {
		if got := g.Decode(g.Encode(s)); got != s {
			t.Errorf("Decode(Encode(%.40q)) = %.40q", s, got)
		}
		if got := g.Decode(g.EncodeOrdinary(s)); got != s {
			t.Errorf("Decode(EncodeOrdinary(%.40q)) = %.40q", s, got)
		}
	}
	// Bytes that are not UTF-8 come back through DecodeBytes; Decode
	// replaces them.
	for _, s := range []string{"\xff", "a\x80b", "\xe2\x82", " \xc3(", "x\xf0\x9f\x98 y"} {
		if got := g.DecodeBytes(g.Encode(s)); string(got) != s {
			t.Errorf("DecodeBytes(Encode(%q)) = %q", s, got)
		}
		if got, want := g.Decode(g.Encode(s)), strings.ToValidUTF8(s, "\uFFFD"); got != want {
			t.Errorf("Decode(Encode(%q)) = %q, want %q", s, got, want)
		}
	}
}

func TestGPT2Special(t *testing.T) {
	g := loadGPT2(t)
	eot := 50256
	if got := g.Encode(tokenizer.EndOfText); !slices.Equal(got, []int{eot}) {
		t.Errorf("Encode(%q) = %v, want [%d]", tokenizer.EndOfText, got, eot)
	}
	ord := g.EncodeOrdinary(tokenizer.EndOfText)
	if slices.Contains(ord, eot) || g.Decode(ord) != tokenizer.EndOfText {
		t.Errorf("EncodeOrdinary(%q) = %v: want ordinary tokens that decode to it", tokenizer.EndOfText, ord)
	}
	if got := g.Decode([]int{eot, -1, 50257}); got != tokenizer.EndOfText+"\uFFFD\uFFFD" {
		t.Errorf("Decode of the end of text and two ids outside the vocabulary = %q", got)
	}
	if g.VocabSize() != 50257 || g.Kind() != "gpt2" {
		t.Errorf("VocabSize, Kind = %d, %q; want 50257, gpt2", g.VocabSize(), g.Kind())
	}
}

// TestGPT2DecodeStream checks that DecodeBytes of consecutive single ids
// concatenate to the text, though some ids cut characters in two.
func TestGPT2DecodeStream(t *testing.T) {
	g := loadGPT2(t)
	s := "emoji 👨‍👩‍👧‍👦 and 漢字 split across byte tokens"
	var buf bytes.Buffer
	cut := false
	for _, id := range g.Encode(s) {
		b := g.DecodeBytes([]int{id})
		cut = cut || !utf8.Valid(b)
		buf.Write(b)
	}
	if buf.String() != s || !cut {
		t.Errorf("streamed decode = %q (some id cut a character: %v), want %q with a cut", buf.String(), cut, s)
	}
}

// TestGPT2Concurrent encodes and decodes on many goroutines at once with
// one tokenizer, whose cache they share; run it with -race.
func TestGPT2Concurrent(t *testing.T) {
	gold := readGolden(t)
	// A tokenizer of its own, so that its cache starts empty.
	g := tokenizer.NewGPT2()
	type job struct {
		text string
		ids  []int
	}
	var jobs []job
	for _, f := range gold.Files {
		if strings.HasPrefix(f.Path, "testdata/") {
			text := readSlice(t, f.Path, f.Offset, f.Length, f.SHA256)
			jobs = append(jobs, job{text[:min(len(text), 20000)], nil})
		}
	}
	for _, c := range gold.Cases[:200] {
		jobs = append(jobs, job{c.Text, c.IDs})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for w := range 8 {
		wg.Go(func() {
			for k := range jobs {
				j := jobs[(k+w*7)%len(jobs)]
				ids := g.Encode(j.text)
				if j.ids != nil && !slices.Equal(ids, j.ids) || g.Decode(ids) != j.text {
					errs <- fmt.Sprintf("goroutine %d: %.30q encodes to %v", w, j.text, ids)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestGPT2Files: LoadGPT2 reads OpenAI's files and Hugging Face's (the
// same content under other names) into the tokenizer NewGPT2 embeds.
func TestGPT2Files(t *testing.T) {
	want := loadGPT2(t)
	s := readGolden(t).Cases[0].Text + " Hugging Face's files <|endoftext|>"
	for _, names := range [][2]string{{"encoder.json", "vocab.bpe"}, {"vocab.json", "merges.txt"}} {
		dir := t.TempDir()
		writeGPT2Files(t, dir, names[0], names[1])
		g, err := tokenizer.LoadGPT2(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Encode(s); !slices.Equal(got, want.Encode(s)) || g.VocabSize() != want.VocabSize() {
			t.Errorf("with %s and %s, Encode(%q) = %v, want %v", names[0], names[1], s, got, want.Encode(s))
		}
		a, _ := g.MarshalJSON()
		b, _ := want.MarshalJSON()
		if !bytes.Equal(a, b) {
			t.Errorf("with %s and %s: the saved form differs from NewGPT2's", names[0], names[1])
		}
	}
}

func TestLoadGPT2Errors(t *testing.T) {
	// GPT-2's byte-to-unicode mapping: printable Latin-1 bytes stand for
	// themselves, the others for U+0100 onwards.
	byteVocab := func() map[string]int {
		v := map[string]int{}
		n := 0
		for b := range 256 {
			if b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae {
				v[string(rune(b))] = b
			} else {
				v[string(rune(256+n))] = b
				n++
			}
		}
		return v
	}
	vocabJSON := func(extra map[string]int) string {
		v := byteVocab()
		for k, id := range extra {
			v[k] = id
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	tests := []struct {
		name    string
		files   map[string]string
		wantErr string // part of the message
	}{
		{"empty dir", nil, "holds neither vocab.json and merges.txt nor encoder.json and vocab.bpe"},
		{"no merges", map[string]string{"vocab.json": "{}"}, "merges.txt"},
		{"no encoder", map[string]string{"vocab.bpe": "#version: 0.2\n"}, "encoder.json"},
		{"bad json", map[string]string{"encoder.json": "[1,2", "vocab.bpe": "#version: 0.2\n"}, "encoder.json: not a JSON object"},
		{"missing byte", map[string]string{"vocab.json": `{"a": 0}`, "merges.txt": ""}, "vocab.json: byte 0x00 ('Ā') has no token"},
		{"bad merge line", map[string]string{"vocab.json": vocabJSON(nil), "merges.txt": "#version: 0.2\na b c\n"}, "merges.txt line 2"},
		{"merge not in vocab", map[string]string{"vocab.json": vocabJSON(nil), "merges.txt": "#version: 0.2\na b\n"}, "merges.txt line 2: merge \"a b\" makes \"ab\", which"},
		{"merge of unknown", map[string]string{"vocab.json": vocabJSON(map[string]int{"ab": 256}), "merges.txt": "ab c\n"}, "uses \"ab\" before"},
		{"id out of range", map[string]string{"vocab.json": vocabJSON(map[string]int{"ab": 999}), "merges.txt": "a b\n"}, "id 999 of \"ab\" is out of range"},
		{"not byte level", map[string]string{"vocab.json": vocabJSON(map[string]int{"a\u4e00": 256}), "merges.txt": ""}, "is not in GPT-2's byte-level form"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		for name, text := range tt.files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := tokenizer.LoadGPT2(dir)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "tokenizer: ") {
			t.Errorf("%s: LoadGPT2 error %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
	if _, err := tokenizer.LoadGPT2(filepath.Join(t.TempDir(), "absent")); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("LoadGPT2 of a missing directory: error %v, want one naming it", err)
	}
	// A tiny vocabulary that is complete loads and merges.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "vocab.json"), []byte(vocabJSON(map[string]int{"ab": 256, "abc": 257})), 0o644)
	os.WriteFile(filepath.Join(dir, "merges.txt"), []byte("#version: 0.2\na b\nab c\n"), 0o644)
	g, err := tokenizer.LoadGPT2(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Encode("abcab"); !slices.Equal(got, []int{257, 256}) {
		t.Errorf("tiny vocabulary: Encode(\"abcab\") = %v, want [257 256]", got)
	}
}

func TestMarshalUnmarshal(t *testing.T) {
	g := loadGPT2(t)
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	back, err := tokenizer.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	s := readGolden(t).Cases[1].Text + " saved and loaded <|endoftext|>"
	if back.Kind() != "gpt2" || back.VocabSize() != g.VocabSize() || !slices.Equal(back.Encode(s), g.Encode(s)) {
		t.Errorf("after MarshalJSON and Unmarshal: kind %q, %d ids, Encode(%q) = %v; want gpt2, %d, %v", back.Kind(), back.VocabSize(), s, back.Encode(s), g.VocabSize(), g.Encode(s))
	}
	broken := strings.Replace(string(b), `"merges":["Ġ t",`, `"merges":["Ġt",`, 1)
	if broken == string(b) {
		t.Fatal("the saved form does not start its merges with \"Ġ t\"")
	}
	if _, err := tokenizer.Unmarshal([]byte(broken)); err == nil || !strings.Contains(err.Error(), `saved merge 0: "Ġt" is not two tokens`) {
		t.Errorf("Unmarshal with a broken merge: error %v", err)
	}
	for _, bad := range []string{`[`, `{}`, `{"kind":"rot13"}`, `{"kind":"gpt2"}`, `{"kind":"gpt2","vocab":{"a":0},"merges":[]}`, `{"kind":"gpt2","vocab":{"a":0},"merges":["ab"]}`} {
		if _, err := tokenizer.Unmarshal([]byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "tokenizer: ") {
			t.Errorf("Unmarshal(%s): error %v, want one starting with \"tokenizer: \"", bad, err)
		}
	}
}

func FuzzEncodeDecode(f *testing.F) {
	g := loadGPT2(f)
	for _, s := range []string{"", "Hello, world!", "don't I'LL", "  \t\n x", "<|endoftext|>a<|endoftext|>", "😀 漢字 e\u0301", "\xff\xfe", "123 4.5e6", strings.Repeat("a", 100)} {
		f.Add(s)
	}
	if b, err := os.ReadFile("../testdata/tokenizer/gpt2.json"); err == nil {
		var gold golden
		if json.Unmarshal(b, &gold) == nil {
			for _, c := range gold.Cases {
				f.Add(c.Text)
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := g.Encode(s)
		for _, id := range ids {
			if id < 0 || id >= g.VocabSize() {
				t.Fatalf("Encode(%q) has id %d outside [0, %d)", s, id, g.VocabSize())
			}
		}
		if got := g.DecodeBytes(ids); string(got) != s {
			t.Fatalf("DecodeBytes(Encode(%q)) = %q", s, got)
		}
		if utf8.ValidString(s) && g.Decode(ids) != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, g.Decode(ids))
		}
		if got := g.DecodeBytes(g.EncodeOrdinary(s)); string(got) != s {
			t.Fatalf("DecodeBytes(EncodeOrdinary(%q)) = %q", s, got)
		}
	})
}

func BenchmarkGPT2Encode(b *testing.B) {
	g := loadGPT2(b)
	text, err := os.ReadFile("../data/shakespeare_char/input.txt")
	if err != nil {
		b.Fatal(err)
	}
	s := string(text)
	b.Run("shakespeare/warm", func(b *testing.B) {
		g.Encode(s)
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			g.Encode(s)
		}
	})
	b.Run("shakespeare/cold", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			b.StopTimer()
			fresh := tokenizer.NewGPT2Cold(g)
			b.StartTimer()
			fresh.Encode(s)
		}
	})
}
