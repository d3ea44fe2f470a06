package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// addedToken is one entry of tokenizer.json's added_tokens.
type addedToken struct {
	content    string
	id         int
	singleWord bool // matches only where no word character touches it
	lstrip     bool // takes the white space on its left
	rstrip     bool // takes the white space on its right
	normalized bool // matched in the normalized text, as normalized
	special    bool
	decoded    string // what Decode gives: the content, normalized if normalized
}

// addedVocab finds added tokens in text as Hugging Face tokenizers does:
// first those that are not normalized, in the text as it is, then those
// that are, in each normalized piece between the first; at each place the
// leftmost match, and of those the longest (Aho-Corasick's leftmost-longest
// semantics), scanning on after the end of each match.
type addedVocab struct {
	byContent map[string]int
	byID      map[int]*addedToken
	raw, norm addedTrie // tokens matched before and after normalization
}

// addedTrie is a byte trie of token contents.
type addedTrie struct {
	nodes []trieNode
	first [256]bool // bytes that start some token
}

type trieNode struct {
	next map[byte]int32
	tok  *addedToken // the token that ends here, if any
}

func (tr *addedTrie) add(s string, tok *addedToken) {
	if len(tr.nodes) == 0 {
		tr.nodes = append(tr.nodes, trieNode{})
	}
	tr.first[s[0]] = true
	n := int32(0)
	for i := 0; i < len(s); i++ {
		nx, ok := tr.nodes[n].next[s[i]]
		if !ok {
			if tr.nodes[n].next == nil {
				tr.nodes[n].next = map[byte]int32{}
			}
			nx = int32(len(tr.nodes))
			tr.nodes[n].next[s[i]] = nx
			tr.nodes = append(tr.nodes, trieNode{})
		}
		n = nx
	}
	tr.nodes[n].tok = tok
}

// longest returns the longest token that starts s, or nil.
func (tr *addedTrie) longest(s string) (*addedToken, int) {
	var best *addedToken
	bestLen := 0
	n := int32(0)
	for i := 0; i < len(s); i++ {
		nx, ok := tr.nodes[n].next[s[i]]
		if !ok {
			break
		}
		n = nx
		if t := tr.nodes[n].tok; t != nil {
			best, bestLen = t, i+1
		}
	}
	return best, bestLen
}

// split cuts s at the added tokens of one trie (the normalized ones when
// normalized is true), passing each piece to f in order: an added token
// with its id (and its stripped white space, if any), or the text between
// with id -1. first tells f whether the piece starts s. Pieces of text may
// be empty.
func (a *addedVocab) split(s string, normalized bool, f func(piece string, id int, first bool)) {
	tr := &a.raw
	if normalized {
		tr = &a.norm
	}
	if len(tr.nodes) == 0 {
		f(s, -1, true)
		return
	}
	done := 0 // s[:done] has been passed to f
	for i := 0; i < len(s); {
		if !tr.first[s[i]] {
			i++
			continue
		}
		tok, n := tr.longest(s[i:])
		if tok == nil {
			i++
			continue
		}
		start, stop := i, i+n
		i = stop
		if tok.singleWord && (start > 0 && endsWithWord(s[:start]) || stop < len(s) && startsWithWord(s[stop:])) {
			continue
		}
		if tok.lstrip {
			start = max(start-trailingSpace(s[:start]), done)
		}
		if tok.rstrip {
			stop += leadingSpace(s[stop:])
			i = stop
		}
		if done < start {
			f(s[done:start], -1, done == 0)
		}
		f(s[start:stop], tok.id, start == 0)
		done = stop
	}
	if done < len(s) || done == 0 {
		f(s[done:], -1, done == 0)
	}
}

// isWordRune reports whether r is a word character (\w of Rust's regex
// crate: alphabetic, a mark, a decimal digit, connector punctuation or a
// joiner).
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) ||
		unicode.Is(unicode.Pc, r) || r == 0x200c || r == 0x200d || unicode.Is(unicode.Other_Alphabetic, r)
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isWordRune(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWordRune(r)
}

// isSpaceRune reports whether r is white space (\s of Rust's regex crate:
// the White_Space property).
func isSpaceRune(r rune) bool {
	return unicode.Is(unicode.White_Space, r)
}

// trailingSpace returns the length in bytes of the white space that ends s.
func trailingSpace(s string) int {
	n := 0
	for len(s) > n {
		r, k := utf8.DecodeLastRuneInString(s[:len(s)-n])
		if !isSpaceRune(r) {
			break
		}
		n += k
	}
	return n
}

// leadingSpace returns the length in bytes of the white space that starts s.
func leadingSpace(s string) int {
	n := 0
	for n < len(s) {
		r, k := utf8.DecodeRuneInString(s[n:])
		if !isSpaceRune(r) {
			break
		}
		n += k
	}
	return n
}
