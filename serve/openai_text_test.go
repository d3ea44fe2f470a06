package serve

import (
	"math/rand/v2"
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
