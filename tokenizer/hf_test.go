package tokenizer_test

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wickml/wick/tokenizer"
)

// The goldens of testdata/tokenizer/hf/golden.json.gz come from Hugging Face
// tokenizers (npm tokenizers 0.23.2) through
// scripts/gen_tokenizer_json_golden.sh.

type hfGolden struct {
	NFC []struct {
		Path   string   `json:"path"`
		Chunks []string `json:"chunks"`
	} `json:"nfc"`
	Cases    []string    `json:"cases"`
	Variants []hfVariant `json:"variants"`
}

type hfVariant struct {
	Name      string                     `json:"name"`
	Base      string                     `json:"base"`
	Patch     map[string]json.RawMessage `json:"patch"`
	Added     []json.RawMessage          `json:"added"`
	VocabSize int                        `json:"vocab_size"`
	Whole     *struct {
		Path          string `json:"path"`
		SHA256        string `json:"sha256"`
		Count         int    `json:"count"`
		IDsSHA256     string `json:"ids_sha256"`
		DecodedSHA256 string `json:"decoded_sha256"`
	} `json:"whole"`
	Files []struct {
		Path   string `json:"path"`
		Chunks []struct {
			Count         int    `json:"count"`
			IDsSHA256     string `json:"ids_sha256"`
			DecodedSHA256 string `json:"decoded_sha256"`
		} `json:"chunks"`
	} `json:"files"`
	Decode []struct {
		IDs  []int  `json:"ids"`
		Text string `json:"text"`
	} `json:"decode"`
	Cases []struct {
		IDs     []int   `json:"ids"`
		Special []int   `json:"special"` // nil: as IDs
		Decoded *string `json:"decoded"` // nil: the text
	} `json:"cases"`
}

// hfCase is one short case of a variant.
type hfCase struct {
	Text, Decoded string
	IDs, Special  []int
}

// cases returns the variant's short cases with their texts.
func (v *hfVariant) cases(g *hfGolden) []hfCase {
	out := make([]hfCase, len(v.Cases))
	for i, c := range v.Cases {
		out[i] = hfCase{Text: g.Cases[i], Decoded: g.Cases[i], IDs: c.IDs, Special: c.Special}
		if c.Special == nil {
			out[i].Special = c.IDs
		}
		if c.Decoded != nil {
			out[i].Decoded = *c.Decoded
		}
	}
	return out
}

var (
	hfGoldenOnce sync.Once
	hfGoldenData hfGolden
	hfGoldenErr  error
	hfBaseMu     sync.Mutex
	hfBases      = map[string][]byte{}
	hfToks       = map[string]*tokenizer.HF{}
)

func loadHFGolden(t *testing.T) *hfGolden {
	t.Helper()
	hfGoldenOnce.Do(func() {
		f, err := os.Open("../testdata/tokenizer/hf/golden.json.gz")
		if err != nil {
			hfGoldenErr = err
			return
		}
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			hfGoldenErr = err
			return
		}
		hfGoldenErr = json.NewDecoder(z).Decode(&hfGoldenData)
		for i := range hfGoldenData.Variants {
			if v := &hfGoldenData.Variants[i]; hfGoldenErr == nil && len(v.Cases) != len(hfGoldenData.Cases) {
				hfGoldenErr = fmt.Errorf("%s: %d cases, want %d", v.Name, len(v.Cases), len(hfGoldenData.Cases))
			}
		}
	})
	if hfGoldenErr != nil {
		t.Fatal(hfGoldenErr)
	}
	return &hfGoldenData
}

// hfBase returns the uncompressed tokenizer.json of a shipped file.
func hfBase(t testing.TB, name string) []byte {
	t.Helper()
	hfBaseMu.Lock()
	defer hfBaseMu.Unlock()
	if b, ok := hfBases[name]; ok {
		return b
	}
	f, err := os.Open(filepath.Join("../testdata/tokenizer/hf", name+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	hfBases[name] = b
	return b
}

// hfTokenizer returns the tokenizer of a variant: its base file with the
// patch applied and the added tokens appended, as the generator made it.
func hfTokenizer(t testing.TB, v *hfVariant) *tokenizer.HF {
	t.Helper()
	hfBaseMu.Lock()
	tok := hfToks[v.Name]
	hfBaseMu.Unlock()
	if tok != nil {
		return tok
	}
	b := hfBase(t, v.Base)
	if len(v.Patch) > 0 || len(v.Added) > 0 {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(b, &top); err != nil {
			t.Fatal(err)
		}
		for k, x := range v.Patch {
			top[k] = x
		}
		if len(v.Added) > 0 {
			var added []json.RawMessage
			if err := json.Unmarshal(top["added_tokens"], &added); err != nil {
				t.Fatal(err)
			}
			added = append(added, v.Added...)
			top["added_tokens"], _ = json.Marshal(added)
		}
		var err error
		if b, err = json.Marshal(top); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := tokenizer.ParseTokenizerJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", v.Name, err)
	}
	hfBaseMu.Lock()
	hfToks[v.Name] = tok
	hfBaseMu.Unlock()
	return tok
}

func idsSHA(ids []int) string {
	h := sha256.New()
	for _, id := range ids {
		fmt.Fprintf(h, "%d\n", id)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func textSHA(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// hfChunks cuts text as the generator does: pieces of at least 2,000 bytes
// ending at a line end, and the rest.
func hfChunks(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' && i+1-start >= 2000 {
			out = append(out, text[start:i+1])
			start = i + 1
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

func readRepoFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHFGolden checks every tokenizer and variant against tokenizers' ids
// and decodings: the short cases one by one, the text files chunk by chunk.
func TestHFGolden(t *testing.T) {
	g := loadHFGolden(t)
	for i := range g.Variants {
		v := &g.Variants[i]
		t.Run(v.Name, func(t *testing.T) {
			tok := hfTokenizer(t, v)
			if tok.VocabSize() != v.VocabSize {
				t.Errorf("VocabSize() = %d, want %d", tok.VocabSize(), v.VocabSize)
			}
			bad := 0
			for _, c := range v.cases(g) {
				ids := tok.Encode(c.Text)
				if !slices.Equal(ids, c.IDs) {
					if bad++; bad <= 5 {
						t.Errorf("Encode(%q) =\n%v, want\n%v", c.Text, ids, c.IDs)
					}
					continue
				}
				if sp := tok.EncodeSpecial(c.Text); !slices.Equal(sp, c.Special) {
					if bad++; bad <= 5 {
						t.Errorf("EncodeSpecial(%q) = %v, want %v", c.Text, sp, c.Special)
					}
				}
				if d := tok.Decode(ids); d != c.Decoded {
					if bad++; bad <= 5 {
						t.Errorf("Decode(Encode(%q)) = %q, want %q", c.Text, d, c.Decoded)
					}
				}
			}
			for _, c := range v.Decode {
				if d := tok.Decode(c.IDs); d != c.Text {
					if bad++; bad <= 10 {
						t.Errorf("Decode(%v) = %q, want %q", c.IDs, d, c.Text)
					}
				}
			}
			for _, f := range v.Files {
				chunks := hfChunks(readRepoFile(t, f.Path))
				if len(chunks) != len(f.Chunks) {
					t.Fatalf("%s: %d chunks, the golden has %d", f.Path, len(chunks), len(f.Chunks))
				}
				for k, c := range chunks {
					want := f.Chunks[k]
					ids := tok.Encode(c)
					if len(ids) != want.Count || idsSHA(ids) != want.IDsSHA256 {
						if bad++; bad <= 10 {
							t.Errorf("%s chunk %d: %d ids, want %d (or a different SHA-256); text %q", f.Path, k, len(ids), want.Count, c)
						}
						continue
					}
					if d := tok.Decode(ids); textSHA(d) != want.DecodedSHA256 {
						if bad++; bad <= 10 {
							t.Errorf("%s chunk %d: decoding differs: %q", f.Path, k, d)
						}
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d mismatches in all", bad)
			}
		})
	}
}

// TestHFShakespeare encodes all of tiny Shakespeare with the three shipped
// tokenizers, token for token as tokenizers does, and decodes it back.
func TestHFShakespeare(t *testing.T) {
	g := loadHFGolden(t)
	for i := range g.Variants {
		v := &g.Variants[i]
		if v.Whole == nil {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			text := readRepoFile(t, v.Whole.Path)
			if textSHA(text) != v.Whole.SHA256 {
				t.Fatalf("%s is not the file the golden was made from", v.Whole.Path)
			}
			tok := hfTokenizer(t, v)
			ids := tok.Encode(text)
			if len(ids) != v.Whole.Count || idsSHA(ids) != v.Whole.IDsSHA256 {
				t.Fatalf("%d ids, want %d (or their SHA-256 differs)", len(ids), v.Whole.Count)
			}
			if d := tok.Decode(ids); textSHA(d) != v.Whole.DecodedSHA256 {
				t.Errorf("decoding differs from tokenizers'")
			} else if v.Base != "mistral" && d != text {
				t.Errorf("Decode(Encode(text)) != text")
			}
		})
	}
}

// TestHFNFC checks the NFC normalizer against tokenizers' on the text
// files, chunk by chunk.
func TestHFNFC(t *testing.T) {
	g := loadHFGolden(t)
	for _, f := range g.NFC {
		chunks := hfChunks(readRepoFile(t, f.Path))
		if len(chunks) != len(f.Chunks) {
			t.Fatalf("%s: %d chunks, the golden has %d", f.Path, len(chunks), len(f.Chunks))
		}
		bad := 0
		for k, c := range chunks {
			if got := tokenizer.NFC(c); textSHA(got) != f.Chunks[k] {
				if bad++; bad <= 3 {
					t.Errorf("%s chunk %d: NFC differs from tokenizers'; text %q", f.Path, k, c)
				}
			}
		}
	}
}

// TestHFConcurrent encodes and decodes from many goroutines at once (run
// under -race) and checks each gets what one goroutine alone gets.
func TestHFConcurrent(t *testing.T) {
	g := loadHFGolden(t)
	v := &g.Variants[0]
	tok := hfTokenizer(t, v)
	cases := v.cases(g)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < len(cases); k += 8 {
				c := cases[k]
				if ids := tok.Encode(c.Text); !slices.Equal(ids, c.IDs) {
					errs <- fmt.Sprintf("Encode(%q) = %v, want %v", c.Text, ids, c.IDs)
					return
				}
				if d := tok.Decode(c.IDs); d != c.Decoded {
					errs <- fmt.Sprintf("Decode(%v) = %q, want %q", c.IDs, d, c.Decoded)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestHFSaveLoad saves a tokenizer with MarshalJSON and reads it back.
func TestHFSaveLoad(t *testing.T) {
	g := loadHFGolden(t)
	v := &g.Variants[2] // mistral, the smallest
	tok := hfTokenizer(t, v)
	b, err := tok.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := tokenizer.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Kind() != "hf" {
		t.Errorf("Kind() = %q, want hf", back.Kind())
	}
	for _, c := range v.cases(g)[:200] {
		if ids := back.Encode(c.Text); !slices.Equal(ids, c.IDs) {
			t.Fatalf("after Unmarshal, Encode(%q) = %v, want %v", c.Text, ids, c.IDs)
		}
	}
}

// TestLoadPretrained reads a directory with tokenizer.json, and one with
// GPT-2's files only.
func TestLoadPretrained(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), hfBase(t, "mistral"), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.LoadPretrained(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Kind() != "hf" || tok.VocabSize() != 32000 {
		t.Errorf("Kind, VocabSize = %q, %d; want hf, 32000", tok.Kind(), tok.VocabSize())
	}
	if got := tokenizer.EncodeSpecial(tok, "Hello world"); !slices.Equal(got, []int{1, 22557, 1526}) {
		t.Errorf("EncodeSpecial = %v, want [1 22557 1526]", got)
	}
	gdir := t.TempDir()
	vocab := map[string]int{}
	for c := range 256 {
		vocab[tokenizer.ByteChar(byte(c))] = c
	}
	vocab["ab"] = 256
	vb, _ := json.Marshal(vocab)
	os.WriteFile(filepath.Join(gdir, "vocab.json"), vb, 0o644)
	os.WriteFile(filepath.Join(gdir, "merges.txt"), []byte("#version: 0.2\na b\n"), 0o644)
	g, err := tokenizer.LoadPretrained(gdir)
	if err != nil {
		t.Fatal(err)
	}
	if g.Kind() != "gpt2" || !slices.Equal(g.Encode("ab"), []int{256}) {
		t.Errorf("GPT-2 directory: Kind %q, Encode(ab) = %v", g.Kind(), g.Encode("ab"))
	}
	if _, err := tokenizer.LoadPretrained(t.TempDir()); err == nil {
		t.Error("LoadPretrained of an empty directory: no error")
	}
}

// TestHFBadFiles checks that what the package does not read, or a file
// that is not consistent, fails at load with one line naming it.
func TestHFBadFiles(t *testing.T) {
	small := func(model string, extra string) string {
		return `{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null` + extra + `,"model":` + model + `}`
	}
	bpe := `{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}`
	cases := []struct {
		name, json, want string
	}{
		{"unigram", small(`{"type":"Unigram","vocab":[["a",0.0]]}`, ""), "model Unigram is not supported"},
		{"wordpiece", small(`{"type":"WordPiece","vocab":{"a":0}}`, ""), "model WordPiece is not supported"},
		{"unknown model", small(`{"type":"Magic"}`, ""), "model Magic is not supported"},
		{"normalizer", strings.Replace(small(bpe, ""), `"normalizer":null`, `"normalizer":{"type":"NFKC"}`, 1), "normalizer NFKC is not supported"},
		{"pre_tokenizer", strings.Replace(small(bpe, ""), `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Whitespace"}`, 1), "pre_tokenizer Whitespace is not supported"},
		{"split pattern", strings.Replace(small(bpe, ""), `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Isolated","invert":false}`, 1), `pattern "\\w+" is not supported`},
		{"decoder", strings.Replace(small(bpe, ""), `"decoder":null`, `"decoder":{"type":"WordPiece","prefix":"##"}`, 1), "decoder WordPiece is not supported"},
		{"post_processor", strings.Replace(small(bpe, ""), `"post_processor":null`, `"post_processor":{"type":"Magic"}`, 1), "post_processor Magic is not supported"},
		{"merge part", small(`{"type":"BPE","vocab":{"a":0,"ab":2},"merges":["a b"]}`, ""), `merge 0 ("a" "b"): "b" is not in the vocabulary`},
		{"merge result", small(`{"type":"BPE","vocab":{"a":0,"b":1},"merges":[["a","b"]]}`, ""), `the merged token "ab" is not in the vocabulary`},
		{"merge form", small(`{"type":"BPE","vocab":{"a":0,"b":1},"merges":["ab"]}`, ""), `merge 0 ("ab") is not two tokens`},
		{"unk", small(`{"type":"BPE","unk_token":"<unk>","vocab":{"a":0},"merges":[]}`, ""), `unk_token "<unk>" is not in the vocabulary`},
		{"duplicate id", small(`{"type":"BPE","vocab":{"a":0,"b":0},"merges":[]}`, ""), `is given to two tokens`},
		{"long token", small(`{"type":"BPE","vocab":{"`+strings.Repeat("x", 2000)+`":0},"merges":[]}`, ""), `2000 bytes long`},
		{"dropout", small(`{"type":"BPE","dropout":0.1,"vocab":{"a":0},"merges":[]}`, ""), `dropout 0.1 is not supported`},
		{"not json", `{"model":`, "not JSON"},
	}
	for _, c := range cases {
		_, err := tokenizer.ParseTokenizerJSON([]byte(c.json))
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line with %q", c.name, msg, c.want)
		}
	}
	// LoadTokenizerJSON names the file.
	p := filepath.Join(t.TempDir(), "tokenizer.json")
	os.WriteFile(p, []byte(cases[0].json), 0o644)
	if _, err := tokenizer.LoadTokenizerJSON(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("LoadTokenizerJSON: error %v does not name %s", err, p)
	}
}

// FuzzHFEncodeDecode checks that encoding never panics, gives ids inside
// the vocabulary, and that byte-level tokenizers decode back to the text
// (made valid UTF-8).
func FuzzHFEncodeDecode(f *testing.F) {
	for _, s := range []string{"", "Hello world", "<|begin_of_text|>x<|im_start|>", " \r\n\t 'S 'ſ 123456", "e\u0301\u0316 가\u11a8 👨‍👩‍👧‍👦", "\xff\xfe<s>\xe4\xbd", strings.Repeat("ab", 100)} {
		f.Add(s)
	}
	names := []string{"llama3", "qwen3", "mistral"}
	toks := make([]*tokenizer.HF, len(names))
	for i, n := range names {
		tok, err := tokenizer.ParseTokenizerJSON(hfBase(f, n))
		if err != nil {
			f.Fatal(err)
		}
		toks[i] = tok
	}
	f.Fuzz(func(t *testing.T, s string) {
		valid := strings.ToValidUTF8(s, "\uFFFD")
		for i, tok := range toks {
			ids := tok.Encode(s)
			for _, id := range ids {
				if id < 0 || id >= tok.VocabSize() {
					t.Fatalf("%s: id %d outside [0, %d)", names[i], id, tok.VocabSize())
				}
			}
			d := tok.Decode(ids)
			want := valid
			if i == 1 {
				want = tokenizer.NFC(valid) // Qwen normalizes
			}
			if i < 2 && s == valid && d != want {
				t.Fatalf("%s: Decode(Encode(%q)) = %q, want %q", names[i], s, d, want)
			}
		}
	})
}
