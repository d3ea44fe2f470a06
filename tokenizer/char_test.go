package tokenizer

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

const sampleText = "The river starts in the hills above the town, where the snow lies late.\n" +
	"In April it runs fast and cold; in August, slow and warm — 42 days, 7 hours.\n" +
	"\tfunc main() { fmt.Println(\"héllo, wörld\") }\n"

func TestCharRoundTrip(t *testing.T) {
	c := NewChar([]byte(sampleText))
	ids := c.Encode(sampleText)
	if len(ids) != len([]rune(sampleText)) {
		t.Errorf("%d ids for %d runes", len(ids), len([]rune(sampleText)))
	}
	if got := c.Decode(ids); got != sampleText {
		t.Errorf("round trip: %q", got)
	}
	// Ids follow code point order, like nanoGPT's sorted(set(text)).
	if got := c.Decode([]int{0, 1}); got != "\t\n" {
		t.Errorf("first ids decode to %q, want tab and newline", got)
	}
	if got := c.Decode([]int{0, -1, c.VocabSize()}); got != "\t\uFFFD\uFFFD" {
		t.Errorf("ids outside the vocabulary decode to %q", got)
	}
	js, _ := c.MarshalJSON()
	c2, err := Unmarshal(js)
	if err != nil || c2.VocabSize() != c.VocabSize() || c2.Decode(ids) != sampleText {
		t.Errorf("unmarshal: %v", err)
	}
	for _, bad := range []string{`{"kind":"char"}`, `{"kind":"char","chars":"ba"}`, `{"kind":"char","chars":"aa"}`, `{"kind":"char","chars":5}`} {
		if _, err := Unmarshal([]byte(bad)); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
}

// TestCharUnknown checks the three ways a Char treats characters outside
// its vocabulary: Encode drops them, EncodeStrict and EncodeEach name the
// first one.
func TestCharUnknown(t *testing.T) {
	c := NewChar([]byte(sampleText))
	text := "snow ☃ lies ☂"
	if got, want := c.Decode(c.Encode(text)), "snow  lies "; got != want {
		t.Errorf("Encode(%q) decodes to %q, want %q", text, got, want)
	}
	for name, err := range map[string]error{
		"EncodeStrict":           func() error { _, err := c.EncodeStrict(text); return err }(),
		"tokenizer.EncodeStrict": func() error { _, err := EncodeStrict(c, text); return err }(),
		"EncodeEach":             c.EncodeEach(t.Context(), []byte(text), func([]int) {}),
	} {
		if err == nil || err.Error() != "character '☃' is not in the tokenizer's vocabulary" {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	ids, err := EncodeStrict(c, "snow")
	if err != nil || !slices.Equal(ids, c.Encode("snow")) {
		t.Errorf("EncodeStrict(snow) = %v, %v", ids, err)
	}
	// A BPE encodes any text: EncodeStrict is Encode.
	b, err := TrainBPE([]byte(sampleText), 300)
	if err != nil {
		t.Fatal(err)
	}
	ids, err = EncodeStrict(b, text)
	if err != nil || b.Decode(ids) != text {
		t.Errorf("EncodeStrict on a BPE: %q, %v", b.Decode(ids), err)
	}
}

// TestEncodeEachBlocks checks that EncodeEach's blocks, joined, are
// Encode's ids when the text is longer than one block.
func TestEncodeEachBlocks(t *testing.T) {
	text := strings.Repeat(sampleText, 100)
	c := NewChar([]byte(text))
	var got []int
	blocks := 0
	if err := c.EncodeEach(t.Context(), []byte(text), func(ids []int) { got = append(got, ids...); blocks++ }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, c.Encode(text)) || blocks < 2 {
		t.Errorf("EncodeEach gave %d ids in %d blocks, Encode %d", len(got), blocks, len(c.Encode(text)))
	}
}

func TestBPE(t *testing.T) {
	text := strings.Repeat(sampleText, 20)
	b, err := TrainBPE([]byte(text), 360)
	if err != nil {
		t.Fatal(err)
	}
	if b.VocabSize() != 360 {
		t.Errorf("vocab %d, want 360", b.VocabSize())
	}
	ids := b.Encode(text)
	if len(ids) >= len(text)/2 {
		t.Errorf("%d bytes encode to %d tokens: merges barely help", len(text), len(ids))
	}
	if got := b.Decode(ids); got != text {
		t.Errorf("round trip differs")
	}
	// Any bytes encode, even unseen ones.
	other := "unseen ☃ text \x01"
	if got := b.Decode(b.Encode(other)); got != other {
		t.Errorf("unseen text decodes to %q", got)
	}
	if got := b.Decode([]int{'a', -1, b.VocabSize()}); got != "a\uFFFD\uFFFD" {
		t.Errorf("ids outside the vocabulary decode to %q", got)
	}
	// Training is deterministic and the JSON form round-trips.
	b2, _ := TrainBPE([]byte(text), 360)
	js1, _ := b.MarshalJSON()
	js2, _ := b2.MarshalJSON()
	if !bytes.Equal(js1, js2) {
		t.Error("two trainings on one text differ")
	}
	b3, err := Unmarshal(js1)
	if err != nil {
		t.Fatal(err)
	}
	if b3.Kind() != "bpe" || !slices.Equal(ids, b3.Encode(text)) {
		t.Error("unmarshalled tokenizer encodes differently")
	}
	// A tiny text runs out of pairs before the vocabulary is full.
	small, _ := TrainBPE([]byte("abab"), 1000)
	if small.VocabSize() != 257 {
		t.Errorf("vocab of \"abab\" = %d, want 257 (one merge)", small.VocabSize())
	}
	if _, err := TrainBPE([]byte(text), 100); err == nil {
		t.Error("vocab_size 100 accepted")
	}
	if _, err := Unmarshal([]byte(`{"kind":"bpe","merges":[[300,1]]}`)); err == nil {
		t.Error("merge of an undefined id accepted")
	}
	if _, err := Train(t.Context(), "wordpiece", []byte(text), 300); err == nil || !strings.Contains(err.Error(), `"wordpiece"`) {
		t.Errorf("Train of an unknown kind: %v", err)
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

// TestSavedByTrain reads the tokenizers of checkpoints that cmd/train
// wrote before the char and bpe tokenizers moved into this package
// (testdata/trainckpt): their JSON is read back and written again byte for
// byte, and they decode the samples train printed from those checkpoints
// (which began with the prompt "The ").
func TestSavedByTrain(t *testing.T) {
	for _, kind := range []string{"char", "bpe"} {
		js := trainTokenizerJSON(t, "../testdata/trainckpt/"+kind+".safetensors")
		tok, err := Unmarshal(js)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if tok.Kind() != kind {
			t.Errorf("kind %q, want %q", tok.Kind(), kind)
		}
		again, err := tok.MarshalJSON()
		if err != nil || !bytes.Equal(again, js) {
			t.Errorf("%s: MarshalJSON differs from the checkpoint's JSON (%v)", kind, err)
		}
		sample, err := os.ReadFile("../testdata/trainckpt/" + kind + ".sample.txt")
		if err != nil {
			t.Fatal(err)
		}
		ids, err := EncodeStrict(tok, "The ")
		if err != nil || tok.Decode(ids) != "The " || !strings.HasPrefix(string(sample), "The ") {
			t.Errorf("%s: the prompt encodes to %v (%v)", kind, ids, err)
		}
	}
}

// trainTokenizerJSON returns the "tokenizer" field of the "wick_train"
// metadata in the header of the safetensors file at path.
func trainTokenizerJSON(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	var hdr struct {
		Meta map[string]string `json:"__metadata__"`
	}
	if err := json.Unmarshal(b[8:8+n], &hdr); err != nil {
		t.Fatal(err)
	}
	var state struct {
		Tokenizer json.RawMessage `json:"tokenizer"`
	}
	if err := json.Unmarshal([]byte(hdr.Meta["wick_train"]), &state); err != nil || len(state.Tokenizer) == 0 {
		t.Fatalf("%s: no tokenizer in the metadata (%v)", path, err)
	}
	return state.Tokenizer
}

// TestCharBPEConcurrent encodes and decodes with one Char and one BPE from
// many goroutines at once (run under -race): each gets what it gets alone.
func TestCharBPEConcurrent(t *testing.T) {
	text := strings.Repeat(sampleText, 10)
	b, err := TrainBPE([]byte(text), 400)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []Tokenizer{NewChar([]byte(text)), b} {
		lines := strings.SplitAfter(text, "\n")
		want := make([][]int, len(lines))
		for i, l := range lines {
			want[i] = tok.Encode(l)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 8*len(lines))
		for g := range 8 {
			wg.Go(func() {
				for k := range lines {
					i := (k + g) % len(lines)
					ids := tok.Encode(lines[i])
					if !slices.Equal(ids, want[i]) || tok.Decode(ids) != lines[i] {
						errs <- fmt.Sprintf("%s: goroutine %d, line %d differs", tok.Kind(), g, i)
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
}

// FuzzCharBPERoundTrip: a BPE decodes what it encodes, for any text, and
// so does a Char made from the text.
func FuzzCharBPERoundTrip(f *testing.F) {
	b, err := TrainBPE([]byte(strings.Repeat(sampleText, 5)), 400)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", sampleText, "  \t\n x", "héllo ☃ 42", "\xff\xfe a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := b.Decode(b.Encode(s)); got != strings.ToValidUTF8(s, "\uFFFD") {
			t.Errorf("bpe: %q decodes to %q", s, got)
		}
		c := NewChar([]byte(s))
		ids, err := c.EncodeStrict(s)
		if err != nil || c.Decode(ids) != string([]rune(s)) {
			t.Errorf("char: %q decodes to %q (%v)", s, c.Decode(ids), err)
		}
	})
}
