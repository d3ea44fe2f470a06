package tokenizer

import "unicode/utf8"

// Character classes of GPT-2's pre-tokenization pattern:
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// \p{L} is a letter, \p{N} a number and \s white space (the White_Space
// property, as in Rust's regex crate, which tiktoken uses). Everything else,
// including bytes that are not valid UTF-8, is "other". The classes come
// from tables.go, generated from tiktoken's behaviour rather than from
// package unicode, whose Unicode version (15.0 in Go 1.26) is older than
// tiktoken's and changes with Go releases.
const (
	clOther = iota
	clLetter
	clNumber
	clSpace
)

// asciiClass holds the class of every ASCII byte.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		t[c] = runeClass(rune(c))
	}
	return t
}()

// classRange gives the code points lo to hi (inclusive) one class.
type classRange struct {
	lo, hi rune
	class  uint8
}

// runeClass returns the class of r in classRanges.
func runeClass(r rune) uint8 { return lookupClass(classRanges[:], r) }

// lookupClass returns the class of r by binary search in ranges (sorted,
// disjoint), clOther where no range holds it.
func lookupClass(ranges []classRange, r rune) uint8 {
	lo, hi := 0, len(ranges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case r < ranges[m].lo:
			hi = m
		case r > ranges[m].hi:
			lo = m + 1
		default:
			return ranges[m].class
		}
	}
	return clOther
}

// classAt returns the class of the character at the start of s (len(s) > 0)
// and its length in bytes. An invalid byte is one character of class other.
func classAt(s string) (uint8, int) {
	if c := s[0]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n == 1 {
		return clOther, 1
	}
	return runeClass(r), n
}

// pieceLen returns the length in bytes of the match of GPT-2's pattern at
// the start of s (len(s) > 0). The pattern matches at every position, so
// successive calls cut s into pieces.
func pieceLen(s string) int {
	// 's|'t|'re|'ve|'m|'ll|'d
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
	// ' ?' before a letter, a number or another character.
	start := 0
	if s[0] == ' ' && len(s) > 1 {
		if cl, _ := classAt(s[1:]); cl != clSpace {
			start = 1
		}
	}
	cl, n := classAt(s[start:])
	j := start + n
	if cl != clSpace {
		// \p{L}+, \p{N}+ or [^\s\p{L}\p{N}]+, greedy.
		for j < len(s) {
			c := s[j]
			if c < utf8.RuneSelf {
				if asciiClass[c] != cl {
					break
				}
				j++
				continue
			}
			cj, nj := classAt(s[j:])
			if cj != cl {
				break
			}
			j += nj
		}
		return j
	}
	// \s+(?!\S): the whole run of white space if it ends the text, else
	// the run less its last character, which goes with the next piece;
	// \s+: a single white-space character before a non-space.
	last := 0
	for j < len(s) {
		cj, nj := classAt(s[j:])
		if cj != clSpace {
			break
		}
		last = j
		j += nj
	}
	if j < len(s) && last > 0 {
		return last
	}
	return j
}
