package serve

import (
	"strings"
	"unicode/utf8"

	"github.com/wickml/wick/tokenizer"
)

// detokenizer turns a request's tokens, one at a time, into text deltas
// whose concatenation is the text of all of them. Each delta is the
// decoding of a window of the latest tokens, some already sent, minus
// that of the sent ones, so that tokenizers that decode a token
// differently at the start of a text (SentencePiece's leading space) are
// decoded in context; a delta that ends in an incomplete UTF-8 sequence
// waits for the next token. The window starts in the prompt, so that the
// first token is decoded after it too.
type detokenizer struct {
	tok  tokenizer.Tokenizer
	ids  []int // ids[:read] are sent (the context of the next delta), the rest not yet
	read int
}

// contextTokens is how many of the prompt's last tokens the first delta
// is decoded after.
const contextTokens = 4

func newDetokenizer(tok tokenizer.Tokenizer, prompt []int) *detokenizer {
	start := max(0, len(prompt)-contextTokens)
	// a context that ends inside a character would not be a prefix of
	// the text after it
	for start < len(prompt) && incomplete(tok.Decode(prompt[start:])) {
		start++
	}
	ids := append([]int(nil), prompt[start:]...)
	return &detokenizer{tok: tok, ids: ids, read: len(ids)}
}

// incomplete reports whether s ends in an invalid or replacement rune:
// the part of a character that the next token completes.
func incomplete(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r == utf8.RuneError && s != ""
}

// add takes the next token and returns the text it completes ("" when it
// ends inside a character).
func (d *detokenizer) add(id int) string {
	d.ids = append(d.ids, id)
	return d.delta(false)
}

// flush returns the text of the tokens held back, even an incomplete
// character.
func (d *detokenizer) flush() string { return d.delta(true) }

func (d *detokenizer) delta(final bool) string {
	if d.read == len(d.ids) {
		return ""
	}
	sent := d.tok.Decode(d.ids[:d.read])
	all := d.tok.Decode(d.ids)
	if !final && incomplete(all) {
		return ""
	}
	var out string
	if strings.HasPrefix(all, sent) {
		out = all[len(sent):]
	} else {
		// the new tokens changed the decoding of the sent ones: send
		// what follows their common prefix's length
		out = all[min(len(all), len(sent)):]
	}
	// the sent tokens are the context of the next delta; older ones go
	d.ids = d.ids[d.read:]
	d.read = len(d.ids)
	return out
}

// stopper finds stop strings in a stream of text deltas. It holds back
// the end of the text that could begin a stop string, so that no part of
// a stop string is ever sent, and cuts the text before the first stop
// string found, as OpenAI does.
type stopper struct {
	stops   []string
	held    string // text not yet sent
	stopped bool
}

// push takes the next delta and returns the text that is safe to send
// and whether a stop string ended the text (after which push and flush
// return "").
func (s *stopper) push(delta string) (string, bool) {
	if s.stopped {
		return "", true
	}
	if len(s.stops) == 0 {
		return delta, false
	}
	text := s.held + delta
	cut := -1
	for _, stop := range s.stops {
		if i := strings.Index(text, stop); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		s.stopped, s.held = true, ""
		return text[:cut], true
	}
	// hold back the longest end of text that begins a stop string
	hold := 0
	for _, stop := range s.stops {
		for n := min(len(stop)-1, len(text)); n > hold; n-- {
			if strings.HasSuffix(text, stop[:n]) {
				hold = n
				break
			}
		}
	}
	s.held = text[len(text)-hold:]
	return text[:len(text)-hold], false
}

// flush returns the text held back at the end of a generation.
func (s *stopper) flush() string {
	out := s.held
	s.held = ""
	return out
}
