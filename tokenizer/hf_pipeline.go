package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// The steps of a tokenizer.json pipeline other than the model: normalizers,
// pre-tokenizers, post-processors and decoders, each the part of Hugging
// Face tokenizers' component of the same name that changes ids or text
// (offsets are not kept).

// A normalizer rewrites a piece of text before it is pre-tokenized.
type normalizer interface {
	normalize(s string) string
}

// nfcNormalizer is the "NFC" normalizer.
type nfcNormalizer struct{}

func (nfcNormalizer) normalize(s string) string { return nfc(s) }

// prependNormalizer is "Prepend": its string before every non-empty piece.
type prependNormalizer struct{ prepend string }

func (p prependNormalizer) normalize(s string) string {
	if s == "" {
		return s
	}
	return p.prepend + s
}

// replaceNormalizer is "Replace" with a string pattern.
type replaceNormalizer struct{ pattern, content string }

func (r replaceNormalizer) normalize(s string) string {
	return strings.ReplaceAll(s, r.pattern, r.content)
}

// sequenceNormalizer is "Sequence": each normalizer in turn.
type sequenceNormalizer []normalizer

func (q sequenceNormalizer) normalize(s string) string {
	for _, n := range q {
		s = n.normalize(s)
	}
	return s
}

// A preStep is one pre-tokenizer: it cuts a piece into smaller ones (or
// rewrites it), passing each to emit with whether it starts the text.
type preStep interface {
	split(s string, first bool, emit func(piece string, first bool))
}

// runPre passes s through steps, and each resulting piece to emit.
func runPre(steps []preStep, s string, first bool, emit func(string)) {
	if len(steps) == 0 {
		emit(s)
		return
	}
	steps[0].split(s, first, func(p string, pfirst bool) {
		runPre(steps[1:], p, pfirst, emit)
	})
}

// splitPT is "Split" with one of the regular expressions that the package
// matches by hand (every one of them matches at every position, so the
// pieces are the successive matches), with behavior "Isolated".
type splitPT struct {
	match func(s string) int // the length of the match at the start of s
}

func (p splitPT) split(s string, first bool, emit func(string, bool)) {
	for i := 0; i < len(s); {
		n := p.match(s[i:])
		emit(s[i:i+n], first && i == 0)
		i += n
	}
}

// digitsPT is "Digits": runs of digits (or each digit, when individual)
// become pieces of their own.
type digitsPT struct{ individual bool }

func (p digitsPT) split(s string, first bool, emit func(string, bool)) {
	start := 0
	for i := 0; i < len(s); {
		cl, n := hfClassAt(s[i:])
		if cl != clNumber {
			i += n
			continue
		}
		if start < i {
			emit(s[start:i], first && start == 0)
		}
		j := i + n
		if !p.individual {
			for j < len(s) {
				c, m := hfClassAt(s[j:])
				if c != clNumber {
					break
				}
				j += m
			}
		}
		emit(s[i:j], first && i == 0)
		start, i = j, j
	}
	if start < len(s) {
		emit(s[start:], first && start == 0)
	}
}

// The prepend schemes of Metaspace.
const (
	prependAlways = iota
	prependFirst
	prependNever
)

// metaspacePT is "Metaspace": spaces become the replacement character
// (U+2581 "▁"), one is put in front as the prepend scheme says, and, when
// split is set, every replacement character starts a new piece.
type metaspacePT struct {
	replacement string
	prepend     int
	split_      bool
}

func (p metaspacePT) split(s string, first bool, emit func(string, bool)) {
	s = strings.ReplaceAll(s, " ", p.replacement)
	if !strings.HasPrefix(s, p.replacement) && (p.prepend == prependAlways || p.prepend == prependFirst && first) {
		s = p.replacement + s
	}
	if !p.split_ {
		emit(s, first)
		return
	}
	start := 0
	for start+1 < len(s) {
		i := strings.Index(s[start+1:], p.replacement)
		if i < 0 {
			break
		}
		end := start + 1 + i
		emit(s[start:end], first && start == 0)
		start = end
	}
	if start < len(s) {
		emit(s[start:], first && start == 0)
	}
}

// byteLevelPT is "ByteLevel", which must end the pre-tokenizer: a space in
// front of each piece that lacks one (add_prefix_space), GPT-2's split
// pattern (use_regex), and the bytes of each piece as the model's symbols
// (the model works on bytes, so the byte-to-character mapping of the
// vocabulary file is undone once, at load, rather than for every piece).
type byteLevelPT struct {
	addPrefixSpace, useRegex bool
}

func (p *byteLevelPT) pieces(s string, emit func(string)) {
	if p.addPrefixSpace && !strings.HasPrefix(s, " ") {
		s = " " + s
	}
	if !p.useRegex {
		emit(s)
		return
	}
	for i := 0; i < len(s); {
		n := gpt2HFPieceLen(s[i:])
		emit(s[i : i+n])
		i += n
	}
}

// A postStep is one post-processor: what it adds to the ids of a text
// encoded with special tokens.
type postStep interface {
	apply(ids []int) []int
}

// templatePost is "TemplateProcessing"'s single template (and the
// one-sequence form of "BertProcessing" and "RobertaProcessing"): special
// tokens' ids around the sequence. A nil part stands for the sequence.
type templatePost struct {
	parts [][]int
}

func (p templatePost) apply(ids []int) []int {
	n := len(ids)
	for _, q := range p.parts {
		n += len(q)
	}
	out := make([]int, 0, n)
	for _, q := range p.parts {
		if q == nil {
			out = append(out, ids...)
		} else {
			out = append(out, q...)
		}
	}
	return out
}

// A decoder is one decoder of a decoding chain: it maps the token strings
// to new ones (the last decoder's are joined).
type decoder interface {
	decode(toks []string) []string
}

// byteLevelDecoder is "ByteLevel": every token's characters back to its
// bytes (a token with a character outside the byte alphabet stays as its
// UTF-8), then one string, invalid UTF-8 replaced.
type byteLevelDecoder struct{}

func (byteLevelDecoder) decode(toks []string) []string {
	var b []byte
	for _, t := range toks {
		k := len(b)
		ok := true
		for _, r := range t {
			c, in := runeByte[r]
			if !in {
				ok = false
				break
			}
			b = append(b, c)
		}
		if !ok {
			b = append(b[:k], t...)
		}
	}
	if utf8.Valid(b) {
		return []string{string(b)}
	}
	return []string{lossyUTF8(b)}
}

// byteFallbackDecoder is "ByteFallback": runs of "<0xNN>" tokens become the
// text of their bytes, or one U+FFFD per byte when those are not valid
// UTF-8.
type byteFallbackDecoder struct{}

func (byteFallbackDecoder) decode(toks []string) []string {
	out := make([]string, 0, len(toks))
	var run []byte
	flush := func() {
		if len(run) == 0 {
			return
		}
		if utf8.Valid(run) {
			out = append(out, string(run))
		} else {
			for range run {
				out = append(out, "\uFFFD")
			}
		}
		run = run[:0]
	}
	for _, t := range toks {
		if b, ok := byteToken(t); ok {
			run = append(run, b)
			continue
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

// byteToken returns the byte of a byte-fallback token "<0xNN>".
func byteToken(t string) (byte, bool) {
	if len(t) != 6 || !strings.HasPrefix(t, "<0x") || t[5] != '>' {
		return 0, false
	}
	v := 0
	for i, c := range []byte(t[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v*16 + int(c-'A'+10)
		case c == '+' && i == 0: // Rust's from_str_radix takes a sign
		default:
			return 0, false
		}
	}
	return byte(v), true
}

// fuseDecoder is "Fuse": all tokens joined into one.
type fuseDecoder struct{}

func (fuseDecoder) decode(toks []string) []string { return []string{strings.Join(toks, "")} }

// stripDecoder is "Strip": up to start copies of content removed from the
// front of every token and up to stop from its end.
type stripDecoder struct {
	content     rune
	start, stop int
}

func (d stripDecoder) decode(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		for k := 0; k < d.start; k++ {
			r, n := utf8.DecodeRuneInString(t)
			if n == 0 || r != d.content {
				break
			}
			t = t[n:]
		}
		for k := 0; k < d.stop; k++ {
			r, n := utf8.DecodeLastRuneInString(t)
			if n == 0 || r != d.content {
				break
			}
			t = t[:len(t)-n]
		}
		out[i] = t
	}
	return out
}

// replaceDecoder is "Replace" with a string pattern, in every token.
type replaceDecoder struct{ pattern, content string }

func (d replaceDecoder) decode(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = strings.ReplaceAll(t, d.pattern, d.content)
	}
	return out
}

// metaspaceDecoder is "Metaspace": the replacement character becomes a
// space, except in the first token, where it goes (unless the prepend
// scheme is "never").
type metaspaceDecoder struct {
	replacement string
	never       bool
}

func (d metaspaceDecoder) decode(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		if i == 0 && !d.never {
			out[i] = strings.ReplaceAll(t, d.replacement, "")
		} else {
			out[i] = strings.ReplaceAll(t, d.replacement, " ")
		}
	}
	return out
}
