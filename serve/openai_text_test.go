package serve

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wickml/wick/tokenizer"
)

// TestDetokenizer: the deltas of GPT-2's tokens, one at a time, are
// valid UTF-8 (a character split over tokens waits for its last byte) and
// add up to the decoding of all of them, after a prompt.
func TestDetokenizer(t *testing.T) {
	tok := tokenizer.NewGPT2()
	for _, c := range []struct{ prompt, text string }{
		{"Say:", " héllo 😀😀 wörld 日本語 ok"},
		{"😀", "😀 ü"},
		{"a", "\n\n  x"},
	} {
		prompt := tok.Encode(c.prompt)
		gen := tok.Encode(c.text)
		d := newDetokenizer(tok, prompt)
		got := ""
		for _, id := range gen {
			delta := d.add(id)
			if !utf8.ValidString(delta) || strings.ContainsRune(delta, utf8.RuneError) {
				t.Errorf("%q: delta %q is not whole characters", c.text, delta)
			}
			got += delta
		}
		got += d.flush()
		if got != tok.Decode(gen) || got != c.text {
			t.Errorf("deltas add up to %q, want %q", got, c.text)
		}
	}
	// a token that ends in the middle of a character is sent at the end
	d := newDetokenizer(tok, nil)
	emoji := tok.Encode("😀")
	if len(emoji) < 2 {
		t.Fatalf("😀 is %d token(s), want a character split over tokens", len(emoji))
	}
	if s := d.add(emoji[0]); s != "" {
		t.Errorf("half a character sent: %q", s)
	}
	if s := d.flush(); s == "" {
		t.Errorf("flush sent nothing")
	}
}

// TestDetokenizerSentencePiece: with Mistral's tokenizer.json, whose
// decoder drops the space in front of a text's first word, each token is
// decoded after the ones before it (the prompt's too), so that the deltas
// keep the spaces between words: they add up to the text the prompt and
// the answer decode to, after the prompt's.
func TestDetokenizerSentencePiece(t *testing.T) {
	f, err := os.Open("../testdata/tokenizer/hf/mistral.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.ParseTokenizerJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	all := tok.Encode("Hello world, how are you? 😀 ünïcode\n  two  spaces")
	prompt, gen := all[:1], all[1:] // "▁Hello", then "▁world", …
	full := tok.Decode(append(append([]int(nil), prompt...), gen...))
	want, ok := strings.CutPrefix(full, tok.Decode(prompt))
	if !ok {
		t.Fatalf("%q does not start with the prompt's %q", full, tok.Decode(prompt))
	}
	if !strings.HasPrefix(want, " world") {
		t.Fatalf("want %q: the space before world is lost", want)
	}
	d := newDetokenizer(tok, prompt)
	got := ""
	for _, id := range gen {
		got += d.add(id)
	}
	got += d.flush()
	if got != want {
		t.Errorf("deltas add up to %q, want %q", got, want)
	}
}

// TestStopper: over random splits of a text into deltas, the text sent
// is the text before the first stop string, and nothing of a stop string
// is sent before the stop.
func TestStopper(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		text  string
		stops []string
		want  string
	}{
		{"hello world, bye", []string{"world"}, "hello "},
		{"hello world, bye", []string{"bye", "lo w"}, "hel"},
		{"aaab", []string{"aab"}, "a"},
		{"no stop here", []string{"xyz", "herex"}, "no stop here"},
		{"ends with a partial sto", []string{"stop"}, "ends with a partial sto"},
		{"", []string{"a"}, ""},
	} {
		for range 50 {
			s := &stopper{stops: c.stops}
			got, stopped := "", false
			rest := c.text
			for rest != "" && !stopped {
				n := 1 + rng.IntN(len(rest))
				var out string
				out, stopped = s.push(rest[:n])
				got += out
				rest = rest[n:]
				for _, stop := range c.stops {
					if !stopped && strings.Contains(got, stop) {
						t.Fatalf("%q: sent %q holding the stop %q", c.text, got, stop)
					}
				}
			}
			if !stopped {
				got += s.flush()
			}
			if got != c.want || stopped != (c.want != c.text) {
				t.Fatalf("%q stops %q: sent %q (stopped %v), want %q", c.text, c.stops, got, stopped, c.want)
			}
		}
	}
}

// TestAppendJSONText checks the streamed chunks' text against
// json.Marshal's encoding of the string, byte for byte.
func TestAppendJSONText(t *testing.T) {
	for _, s := range []string{"", "plain text 123", `a "quoted" \ back`, "<b>&amp;</b>", "tab\tnew\nline\x00\x1f", "héllo 世界 🎉", "\u2028\u2029", "bad \xff\xfe utf-8", "\x7f del"} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONText([]byte("x"), s); string(got) != "x"+string(want[1:len(want)-1]) {
			t.Errorf("%q: %s, json.Marshal %s", s, got, want)
		}
	}
}
