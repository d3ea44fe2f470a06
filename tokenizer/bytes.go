package tokenizer

import "unicode/utf8"

// GPT-2's vocabulary files write every byte as a printable character:
// printable Latin-1 bytes stand for themselves, and the other 68 bytes
// (controls, space, 0x7f-0xa0, 0xad) for U+0100 onwards, in byte order.
// byteRune maps a byte to its character and runeByte maps back.
var byteRune, runeByte = func() (br [256]rune, rb map[rune]byte) {
	printable := func(b int) bool {
		return b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae && b <= 0xff
	}
	rb = make(map[rune]byte, 256)
	n := 0
	for b := range 256 {
		if printable(b) {
			br[b] = rune(b)
		} else {
			br[b] = rune(256 + n)
			n++
		}
		rb[br[b]] = byte(b)
	}
	return br, rb
}()

// unmapBytes returns the bytes a vocabulary-file token stands for, and false
// when the token holds a character that stands for no byte.
func unmapBytes(tok string) ([]byte, bool) {
	b := make([]byte, 0, len(tok))
	for _, r := range tok {
		c, ok := runeByte[r]
		if !ok {
			return nil, false
		}
		b = append(b, c)
	}
	return b, true
}

// mapBytes returns the vocabulary-file form of the bytes b.
func mapBytes(b []byte) string {
	s := make([]byte, 0, 2*len(b))
	for _, c := range b {
		s = utf8.AppendRune(s, byteRune[c])
	}
	return string(s)
}
