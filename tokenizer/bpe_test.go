package tokenizer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// cjkText returns about n bytes of deterministic text drawn from distinct
// CJK ideographs (U+4E00–U+9FFF, U+3400–U+4DBF, then U+20000 onwards):
// every other character is the next one of all of them in a shuffled order
// (until each has appeared), the others follow a Zipf law, with a comma
// every few characters, and lines of lineChars/2 to lineChars characters
// (no line breaks at all when lineChars is 0). There are no spaces, so
// every line is one chunk of the pre-tokenizer: the case where BPE has the
// fewest repeated chunks to lean on and the longest chunks to merge in.
func cjkText(n, distinct, lineChars int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	chars := make([]rune, 0, distinct)
	for _, blk := range [][2]rune{{0x4E00, 0x9FFF}, {0x3400, 0x4DBF}, {0x20000, 0x2A6DF}} {
		for c := blk[0]; c <= blk[1] && len(chars) < distinct; c++ {
			chars = append(chars, c)
		}
	}
	perm := slices.Clone(chars)
	r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(chars)-1))
	var b bytes.Buffer
	for i, line := 0, 0; b.Len() < n; i++ {
		if i%2 == 0 && len(perm) > 0 {
			b.WriteRune(perm[0])
			perm = perm[1:]
		} else {
			b.WriteRune(chars[zipf.Uint64()])
		}
		line++
		switch {
		case lineChars > 0 && line >= lineChars/2+r.IntN(lineChars/2+1):
			b.WriteString("。\n")
			line = 0
		case r.IntN(10) == 0:
			b.WriteString("，")
		}
	}
	return b.Bytes()
}

func TestCJKText(t *testing.T) {
	text := cjkText(780_000, 70_000, 0)
	seen := map[rune]bool{}
	for _, c := range string(text) {
		seen[c] = true
	}
	if len(text) < 780_000 || len(seen) < 70_000 || !utf8.Valid(text) {
		t.Fatalf("%d bytes, %d distinct characters", len(text), len(seen))
	}
}

// shakespeare returns tiny Shakespeare, shipped at nanoGPT's path
// data/shakespeare_char/input.txt.
func shakespeare(tb testing.TB) []byte {
	b, err := os.ReadFile("../data/shakespeare_char/input.txt")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func benchTrain(b *testing.B, text []byte, vocab int) {
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok, err := TrainBPE(text, vocab)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(tok.VocabSize()), "vocab")
	}
}

// BenchmarkReferenceTrainBPE times the first, quadratic trainer on the
// same texts, for comparison (the one-line CJK text takes minutes).
func BenchmarkReferenceTrainBPE(b *testing.B) {
	bench := func(text []byte, vocab int) func(b *testing.B) {
		return func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				b.ReportMetric(float64(256+len(referenceTrainBPE(text, vocab))), "vocab")
			}
		}
	}
	b.Run("cjk780k-lines/1024", bench(cjkText(780_000, 70_000, 60), 1024))
	b.Run("cjk780k-oneline/1024", bench(cjkText(780_000, 70_000, 0), 1024))
	b.Run("shakespeare/1024", bench(shakespeare(b), 1024))
	b.Run("shakespeare/65536", bench(shakespeare(b), 65536))
}

func BenchmarkTrainBPE(b *testing.B) {
	b.Run("cjk780k-lines/1024", func(b *testing.B) { benchTrain(b, cjkText(780_000, 70_000, 60), 1024) })
	b.Run("cjk780k-oneline/1024", func(b *testing.B) { benchTrain(b, cjkText(780_000, 70_000, 0), 1024) })
	for _, kb := range []int{195, 390, 1560} { // with 780: how time grows with the text
		b.Run(fmt.Sprintf("cjk%dk-oneline/1024", kb), func(b *testing.B) { benchTrain(b, cjkText(kb*1000, 70_000, 0), 1024) })
	}
	b.Run("shakespeare/1024", func(b *testing.B) { benchTrain(b, shakespeare(b), 1024) })
	b.Run("shakespeare/65536", func(b *testing.B) { benchTrain(b, shakespeare(b), 65536) })
}

// TestTrainBPEMatchesReference checks the incremental trainer against the
// first, quadratic one, merge for merge, on texts that exercise runs of a
// repeated byte (the overlapping pairs a a a), ties, multi-byte characters
// and sampled windows.
func TestTrainBPEMatchesReference(t *testing.T) {
	goSrc, err := os.ReadFile("bpe.go")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		text  []byte
		vocab int
	}{
		{"sample", []byte(strings.Repeat(sampleText, 20)), 600},
		{"runs", []byte("aaaaaaa aaaa aaaaa bbbbbbbbbbbb abababab aaabbbaaabbb aa a aaa\n\n\n\n    x"), 400},
		{"ties", []byte("ab cd ab cd ef gh ef gh"), 300},
		{"go", goSrc, 2000},
		{"cjk", cjkText(60_000, 5_000, 60), 1024},
		{"windows", append([]byte(strings.Repeat(sampleText, BPETrainBytes/len(sampleText))), cjkText(200_000, 3_000, 60)...), 600},
	}
	cases = append(cases, struct {
		name  string
		text  []byte
		vocab int
	}{"shakespeare", shakespeare(t)[:200_000], 3000})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := TrainBPE(c.text, c.vocab)
			if err != nil {
				t.Fatal(err)
			}
			want := referenceTrainBPE(c.text, c.vocab)
			if len(b.merges) != len(want) {
				t.Errorf("%d merges, reference %d", len(b.merges), len(want))
			}
			for i := range min(len(b.merges), len(want)) {
				if b.merges[i] != want[i] {
					t.Fatalf("merge %d is %v, reference %v", i, b.merges[i], want[i])
				}
			}
		})
	}
}

// TestEncodeChunkMatchesReference checks both paths of encodeChunk (the
// rescanning loop for short chunks, the heap for long ones) against the
// first implementation, on chunks of every length up to a few hundred
// bytes and on long ones with runs of repeated symbols.
func TestEncodeChunkMatchesReference(t *testing.T) {
	train := append([]byte(strings.Repeat(sampleText, 5)), cjkText(40_000, 2_000, 0)...)
	train = append(train, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaabbbbbbbbbbbbbb"...)
	b, err := TrainBPE(train, 1500)
	if err != nil {
		t.Fatal(err)
	}
	other := cjkText(5_000, 3_000, 0)
	r := rand.New(rand.NewPCG(3, 4))
	var chunks [][]byte
	for n := 1; n < 400; n++ {
		i := r.IntN(len(train) - n)
		chunks = append(chunks, train[i:i+n])
		j := r.IntN(len(other) - n)
		chunks = append(chunks, other[j:j+n])
	}
	chunks = append(chunks, bytes.Repeat([]byte("a"), 1001), bytes.Repeat([]byte("ab"), 700), train, other)
	for _, c := range chunks {
		got := b.encodeChunk(c, nil)
		if want := b.referenceEncodeChunk(c); !slices.Equal(got, want) {
			t.Fatalf("chunk of %d bytes %q…: %d ids, reference %d", len(c), c[:min(len(c), 20)], len(got), len(want))
		}
	}
}

func BenchmarkEncodeBPE(b *testing.B) {
	bench := func(text []byte, vocab int) func(b *testing.B) {
		return func(b *testing.B) {
			tok, err := TrainBPE(text, vocab)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if err := tok.EncodeEach(context.Background(), text, func([]int) {}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("cjk780k-oneline/1024", bench(cjkText(780_000, 70_000, 0), 1024))
	b.Run("shakespeare/1024", bench(shakespeare(b), 1024))
}

// TestCancel checks that tokenizer training and encoding return the
// context's error when it is cancelled, and encode as before when not.
func TestCancel(t *testing.T) {
	text := append([]byte(strings.Repeat(sampleText, 50)), cjkText(100_000, 3_000, 0)...)
	b, err := TrainBPE(text, 400)
	if err != nil {
		t.Fatal(err)
	}
	c := NewChar(text)
	ctx, cancel := context.WithCancel(context.Background())
	each := func(tok EachEncoder, ctx context.Context) ([]int, error) {
		var ids []int
		err := tok.EncodeEach(ctx, text, func(b []int) { ids = append(ids, b...) })
		return ids, err
	}
	for _, tok := range []Tokenizer{b, c} {
		want := tok.Encode(string(text))
		got, err := each(tok.(EachEncoder), ctx)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: EncodeEach differs from Encode (%v)", tok.Kind(), err)
		}
	}
	cancel()
	for _, tok := range []Tokenizer{b, c} {
		if _, err := each(tok.(EachEncoder), ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: EncodeEach on a cancelled context: %v", tok.Kind(), err)
		}
	}
	// One long chunk: encodeLong looks at the context too.
	if ids := b.encodeLong(ctx, text[len(text)-90_000:], nil); len(ids) != 0 {
		t.Errorf("encodeLong returned %d ids on a cancelled context, want none", len(ids))
	}
	if _, err := TrainBPEContext(ctx, text, 400); !errors.Is(err, context.Canceled) {
		t.Errorf("TrainBPEContext on a cancelled context: %v", err)
	}
	if _, err := Train(ctx, "bpe", text, 400); !errors.Is(err, context.Canceled) {
		t.Errorf("Train on a cancelled context: %v", err)
	}
}

// TestBPEUnbrokenText trains on and encodes a 1 MiB line without
// whitespace, with multi-byte characters: the pre-tokenizer cuts it into
// pieces of at most MaxBPEChunk bytes on character boundaries (which is
// what bounds the memory of both), and the ids decode to the text.
func TestBPEUnbrokenText(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString([]string{"a", "b", "ab", "é", "日本", "xyz"}[r.IntN(6)])
	}
	text := []byte(b.String())
	tok, err := TrainBPE(text, 400)
	if err != nil {
		t.Fatal(err)
	}
	var all []int
	pieces := 0
	err = tok.EncodeEach(context.Background(), text, func(ids []int) {
		pieces++
		if n := len(tok.Decode(ids)); n > MaxBPEChunk {
			t.Fatalf("a chunk of %d bytes, more than MaxBPEChunk", n)
		}
		all = append(all, ids...)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Decode(all); got != string(text) {
		t.Fatalf("decoding the ids does not give the text back")
	}
	if want := len(text) / MaxBPEChunk; pieces < want {
		t.Errorf("%d chunks, want at least %d", pieces, want)
	}
	if tok.VocabSize() < 300 {
		t.Errorf("only %d tokens learned", tok.VocabSize())
	}
	for s := text; len(s) > 0; {
		n := chunkLen(s)
		if n > MaxBPEChunk || !utf8.Valid(s[:n]) {
			t.Fatalf("chunk of %d bytes, valid UTF-8 %v", n, utf8.Valid(s[:n]))
		}
		s = s[n:]
	}
}

// TestChunkLenLongRuns: chunkLen, which looks at most MaxBPEChunk+2 bytes
// ahead (splitting a 100 MB line without whitespace was quadratic when it
// scanned the whole run for each chunk), cuts runs of every class and
// length around the bound as a scan of the whole run does.
func TestChunkLenLongRuns(t *testing.T) {
	whole := func(s []byte) int { // chunkLen's rule with the run scanned to its end
		i := 0
		if s[0] == ' ' && len(s) > 1 && byteClass(s[1]) != bcSpace {
			i = 1
		}
		cl := byteClass(s[i])
		j := i + 1
		for j < len(s) && byteClass(s[j]) == cl {
			j++
		}
		if cl == bcSpace && j-i > 1 && j < len(s) && s[j-1] == ' ' {
			j--
		}
		if j > MaxBPEChunk {
			j = MaxBPEChunk
			for j > 1 && s[j]&0xc0 == 0x80 {
				j--
			}
		}
		return j
	}
	for _, fill := range []string{"a", " ", "\t", "7", ",", "é", "日"} {
		for _, lead := range []string{"", " "} {
			for _, tail := range []string{"", "x", " ", " y", "\n"} {
				for n := MaxBPEChunk - 4; n <= MaxBPEChunk+6; n++ {
					s := []byte(lead)
					for len(s) < len(lead)+n {
						s = append(s, fill...)
					}
					s = append(s, tail...)
					for off := 0; off < len(s); {
						got, want := chunkLen(s[off:]), whole(s[off:])
						if got != want {
							t.Fatalf("fill %q, lead %q, tail %q, %d bytes, at %d: chunkLen %d, a scan of the whole run %d", fill, lead, tail, n, off, got, want)
						}
						off += got
					}
				}
			}
		}
	}
}
