package tokenizer

import "unicode/utf8"

// The split patterns of the tokenizer.json files this package reads, each
// matched by hand: Go's regexp has no lookahead, which their \s+(?!\S)
// needs. Every one of them matches at every position, so cutting a text
// at successive matches gives its pieces. The classes (\p{L}, \p{N}, \s)
// are those of hfClassRanges, probed from Hugging Face tokenizers.
const (
	// llama3Pattern is Llama 3's (tiktoken's cl100k_base), with numbers in
	// runs of up to three digits.
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// qwenPattern is Qwen 2 and 3's: Llama 3's with one digit per number.
	qwenPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// gpt2Pattern is GPT-2's, which ByteLevel's use_regex applies.
	gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// splitMatchers maps each pattern the package knows to its matcher.
var splitMatchers = map[string]func(string) int{
	llama3Pattern: func(s string) int { return cl100kPieceLen(s, 3) },
	qwenPattern:   func(s string) int { return cl100kPieceLen(s, 1) },
	gpt2Pattern:   gpt2HFPieceLen,
}

// hfASCIIClass holds the class of every ASCII byte.
var hfASCIIClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		t[c] = hfRuneClass(rune(c))
	}
	return t
}()

// hfRuneClass returns the class of r as tokenizers sees it.
func hfRuneClass(r rune) uint8 { return lookupClass(hfClassRanges[:], r) }

// hfClassAt returns the class of the character that starts s (valid UTF-8,
// len(s) > 0) and its length.
func hfClassAt(s string) (uint8, int) {
	if c := s[0]; c < utf8.RuneSelf {
		return hfASCIIClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s)
	return hfRuneClass(r), n
}

// runOf returns the length of the run of characters of class cl that
// starts s.
func runOf(s string, cl uint8) int {
	j := 0
	for j < len(s) {
		if c := s[j]; c < utf8.RuneSelf {
			if hfASCIIClass[c] != cl {
				break
			}
			j++
			continue
		}
		c, n := hfClassAt(s[j:])
		if c != cl {
			break
		}
		j += n
	}
	return j
}

// contractionLen returns the length of the match of (?i:s|t|re|ve|m|ll|d)
// at the start of s, or 0. Oniguruma folds case by Unicode's rules, so "s"
// also matches U+017F (ſ, the long s).
func contractionLen(s string) int {
	if len(s) == 0 {
		return 0
	}
	lower := func(c byte) byte { return c | 0x20 }
	switch lower(s[0]) {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if len(s) > 1 && lower(s[1]) == 'e' {
			return 2
		}
	case 'l':
		if len(s) > 1 && lower(s[1]) == 'l' {
			return 2
		}
	}
	if len(s) > 1 && s[0] == 0xc5 && s[1] == 0xbf {
		return 2
	}
	return 0
}

func isCRLF(c byte) bool { return c == '\r' || c == '\n' }

// cl100kPieceLen returns the length of the match at the start of s
// (len(s) > 0) of Llama 3's pattern (maxDigits 3) or Qwen's (maxDigits 1):
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// with the alternatives tried in order, as a backtracking engine does.
func cl100kPieceLen(s string, maxDigits int) int {
	if s[0] == '\'' {
		if n := contractionLen(s[1:]); n > 0 {
			return 1 + n
		}
	}
	c0, n0 := hfClassAt(s)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c0 == clLetter {
		return n0 + runOf(s[n0:], clLetter)
	}
	if c0 != clNumber && !isCRLF(s[0]) && n0 < len(s) {
		if c1, n1 := hfClassAt(s[n0:]); c1 == clLetter {
			return n0 + n1 + runOf(s[n0+n1:], clLetter)
		}
	}
	// \p{N}{1,maxDigits}
	if c0 == clNumber {
		j := n0
		for k := 1; k < maxDigits && j < len(s); k++ {
			c, n := hfClassAt(s[j:])
			if c != clNumber {
				break
			}
			j += n
		}
		return j
	}
	//  ?[^\s\p{L}\p{N}]+[\r\n]*
	start := 0
	if s[0] == ' ' && len(s) > 1 {
		if c1, _ := hfClassAt(s[1:]); c1 == clOther {
			start = 1
		}
	}
	if start == 1 || c0 == clOther {
		j := start + runOf(s[start:], clOther)
		for j < len(s) && isCRLF(s[j]) {
			j++
		}
		return j
	}
	// c0 is white space. \s*[\r\n]+: the run up to its last CR or LF.
	end, last, lastNL := 0, 0, -1
	for end < len(s) {
		c, n := hfClassAt(s[end:])
		if c != clSpace {
			break
		}
		if isCRLF(s[end]) {
			lastNL = end
		}
		last = end
		end += n
	}
	if lastNL >= 0 {
		return lastNL + 1
	}
	// \s+(?!\S): the run if it ends the text, else all of it but its last
	// character; \s+: a single character before a non-space.
	if end < len(s) && last > 0 {
		return last
	}
	return end
}

// gpt2HFPieceLen returns the length of the match of GPT-2's pattern at the
// start of s (len(s) > 0), with Hugging Face tokenizers' classes:
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func gpt2HFPieceLen(s string) int {
	if s[0] == '\'' && len(s) > 1 {
		switch s[1] {
		case 's', 't', 'm', 'd':
			return 2
		case 'r', 'v':
			if len(s) > 2 && s[2] == 'e' {
				return 3
			}
		case 'l':
			if len(s) > 2 && s[2] == 'l' {
				return 3
			}
		}
	}
	start := 0
	if s[0] == ' ' && len(s) > 1 {
		if cl, _ := hfClassAt(s[1:]); cl != clSpace {
			start = 1
		}
	}
	cl, n := hfClassAt(s[start:])
	if cl != clSpace {
		return start + n + runOf(s[start+n:], cl)
	}
	end, last := 0, 0
	for end < len(s) {
		c, n := hfClassAt(s[end:])
		if c != clSpace {
			break
		}
		last = end
		end += n
	}
	if end < len(s) && last > 0 {
		return last
	}
	return end
}
