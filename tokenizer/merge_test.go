package tokenizer_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/tokenizer"
)

// TestMergeHeap checks that the heap merge of long pieces gives the ids of
// the linear merge, which follows tiktoken step by step.
func TestMergeHeap(t *testing.T) {
	g := loadGPT2(t)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "e", "r", "s", "t", "th", "in", "an", "er", "é", "😀", "漢", "!", "."}
	for i := range 2000 {
		var sb strings.Builder
		for sb.Len() < 1+rng.IntN(64) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		piece := sb.String()
		if len(piece) > 64 {
			piece = piece[:64]
		}
		lin, heap := tokenizer.MergeBoth(g, piece)
		if !slices.Equal(lin, heap) {
			t.Fatalf("piece %d %q: linear merge %v, heap merge %v", i, piece, lin, heap)
		}
		if got := string(g.DecodeBytes(heap)); got != piece {
			t.Fatalf("piece %q: merged ids decode to %q", piece, got)
		}
	}
	// A long piece takes the heap path inside Encode and still round-trips.
	long := strings.Repeat("abracadabra", 500)
	if got := g.Decode(g.Encode(long)); got != long {
		t.Errorf("a %d-byte word does not round-trip", len(long))
	}
}

// TestPieceLen pins the pre-tokenization of cases where the regular
// expression's alternatives and its lookahead decide.
func TestPieceLen(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"don't", []string{"don", "'t"}},
		{"I'LL", []string{"I", "'", "LL"}},
		{"we're 've'll'd'm's", []string{"we", "'re", " '", "ve", "'ll", "'d", "'m", "'s"}},
		{"?'s", []string{"?'", "s"}},
		{"a   b", []string{"a", "  ", " b"}},
		{"a \t b", []string{"a", " \t", " b"}},
		{"a\t\tb", []string{"a", "\t", "\t", "b"}},
		{"a\n\n", []string{"a", "\n\n"}},
		{"a  ", []string{"a", "  "}},
		{" 123abc", []string{" 123", "abc"}},
		{" !?x", []string{" !?", "x"}},
		{"x\u3000\u3000y", []string{"x", "\u3000", "\u3000", "y"}},
		{"x \u00a0y", []string{"x", " ", "\u00a0", "y"}},
		{"½Ⅻ²", []string{"½Ⅻ²"}},
		{"e\u0301", []string{"e", "\u0301"}},
		{"a\xffb", []string{"a", "\xff", "b"}},
		{" \xff", []string{" \xff"}},
	}
	for _, tt := range tests {
		var got []string
		for s := tt.text; len(s) > 0; {
			n := tokenizer.PieceLen(s)
			got = append(got, s[:n])
			s = s[n:]
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("pieces of %q = %q, want %q", tt.text, got, tt.want)
		}
	}
}
