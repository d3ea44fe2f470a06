package tokenizer_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/internal/boundedread"
	"github.com/wickml/wick/tokenizer"
)

// allocated returns the bytes fn allocates on the heap (in all: freed
// ones count too), a bound on its peak that does not depend on when the
// collector runs.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestBPEBomb: merges that double a token's length at every step (a 1 KB
// definition that stood for 32 GiB, and exhausted memory when a
// checkpoint holding it was loaded) are refused before any token is
// built.
func TestBPEBomb(t *testing.T) {
	for _, n := range []int{28, 34, 60} {
		merges := [][2]int{{0, 0}}
		for i := range n - 1 {
			merges = append(merges, [2]int{256 + i, 256 + i})
		}
		def, _ := json.Marshal(map[string]any{"kind": "bpe", "merges": merges})
		var err error
		alloc := allocated(func() { _, err = tokenizer.Unmarshal(def) })
		if err == nil || !strings.Contains(err.Error(), "more than the 2097152 a token may have") {
			t.Errorf("%d doubling merges: error %v, want one about the token's length", n, err)
		}
		if alloc > 1<<20 {
			t.Errorf("%d doubling merges: refusing them allocated %d bytes, want under 1 MiB", n, alloc)
		}
	}
	// Many tokens each under the bound but too long together: 1 MiB
	// tokens (from 19 doublings) repeated as (x, 0) merges.
	merges := [][2]int{{0, 0}}
	for i := range 19 {
		merges = append(merges, [2]int{256 + i, 256 + i})
	}
	for i := range 200 {
		merges = append(merges, [2]int{256 + 19 + i, 0})
	}
	def, _ := json.Marshal(map[string]any{"kind": "bpe", "merges": merges})
	var err error
	alloc := allocated(func() { _, err = tokenizer.Unmarshal(def) })
	if err == nil || !strings.Contains(err.Error(), "in all, more than the 67108864 a vocabulary may have") {
		t.Errorf("long tokens: error %v, want one about the total", err)
	}
	if alloc > 1<<20 {
		t.Errorf("long tokens: refusing them allocated %d bytes, want under 1 MiB", alloc)
	}
	// A legitimate long token still loads.
	ok := [][2]int{{'a', 'a'}, {256, 256}, {257, 257}}
	def, _ = json.Marshal(map[string]any{"kind": "bpe", "merges": ok})
	tok, err := tokenizer.Unmarshal(def)
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Encode("aaaaaaaa"); !slices.Equal(got, []int{258}) {
		t.Errorf("Encode(aaaaaaaa) = %v, want [258]", got)
	}
}

// gpt2Byte returns GPT-2's byte-level form of byte b.
func gpt2Byte(b byte) string {
	n := 0
	for c := range int(b) {
		if !(c >= '!' && c <= '~' || c >= 0xa1 && c <= 0xac || c >= 0xae) {
			n++
		}
	}
	if b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae {
		return string(rune(b))
	}
	return string(rune(256 + n))
}

// writeBPEFiles writes vocab.json (the 256 bytes at their values, then
// extra) and merges.txt to a new directory.
func writeBPEFiles(t testing.TB, extra map[string]int, merges string) string {
	t.Helper()
	v := map[string]int{}
	for b := range 256 {
		v[gpt2Byte(byte(b))] = b
	}
	for k, id := range extra {
		v[k] = id
	}
	b, _ := json.Marshal(v)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vocab.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "merges.txt"), []byte(merges), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLoadGPT2TruncatedMerges: a merges file cut short (or empty) left
// vocabulary entries that no merge makes, which were taken as special
// tokens; it is an error naming the file's last merge line.
func TestLoadGPT2TruncatedMerges(t *testing.T) {
	extra := map[string]int{"ab": 256, "abc": 257, "<|endoftext|>": 258}
	dir := writeBPEFiles(t, extra, "#version: 0.2\na b\nab c\n")
	g, err := tokenizer.LoadGPT2(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Encode("abc<|endoftext|>"); !slices.Equal(got, []int{257, 258}) {
		t.Errorf("complete files: Encode = %v, want [257 258]", got)
	}
	for _, tt := range []struct{ merges, want string }{
		{"#version: 0.2\na b\n", `merges.txt (whose last merge is line 2): token "abc" (id 257) of`},
		{"#version: 0.2\n", `merges.txt (which holds no merges): token "ab" (id 256)`},
		{"", `merges.txt (which holds no merges): token "ab" (id 256)`},
		{"#version: 0.2\na b\nab", `merges.txt line 3: "ab" is not two tokens separated by a space`},
		{"#version: 0.2\na b\nab d\n", `merges.txt line 3: merge "ab d" makes "abd", which`},
	} {
		dir := writeBPEFiles(t, extra, tt.merges)
		_, err := tokenizer.LoadGPT2(dir)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("merges %q: error %v, want one containing %q", tt.merges, err, tt.want)
		}
	}
	// Too many special tokens.
	many := map[string]int{}
	for i := range tokenizer.MaxSpecialTokens + 1 {
		many[fmt.Sprintf("<%d>", i)] = 256 + i
	}
	if _, err := tokenizer.LoadGPT2(writeBPEFiles(t, many, "")); err == nil || !strings.Contains(err.Error(), "more than 1024 tokens") {
		t.Errorf("%d special tokens: error %v", len(many), err)
	}
}

// TestLoadGPT2Bounded: vocabulary and merges files are read with a limit,
// so that a huge (here sparse) or endless one is refused before it is
// read.
func TestLoadGPT2Bounded(t *testing.T) {
	dir := writeBPEFiles(t, nil, "")
	if err := os.Truncate(filepath.Join(dir, "vocab.json"), 8<<30); err != nil {
		t.Fatal(err)
	}
	var err error
	alloc := allocated(func() { _, err = tokenizer.LoadGPT2(dir) })
	if !errors.Is(err, boundedread.ErrTooLarge) || !strings.Contains(err.Error(), "vocab.json") {
		t.Errorf("8 GiB vocab.json: error %v", err)
	}
	if alloc > 1<<20 {
		t.Errorf("8 GiB vocab.json: refusing it allocated %d bytes", alloc)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		return
	}
	dir = t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "encoder.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vocab.bpe"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	alloc = allocated(func() { _, err = tokenizer.LoadGPT2(dir) })
	if !errors.Is(err, boundedread.ErrTooLarge) || !strings.Contains(err.Error(), "encoder.json") {
		t.Errorf("encoder.json of /dev/zero: error %v", err)
	}
	if alloc > 4*tokenizer.MaxGPT2FileBytes {
		t.Errorf("encoder.json of /dev/zero: refusing it allocated %d bytes", alloc)
	}
}

// referenceMerge is tiktoken's byte-pair merge as plainly as it can be
// written: merge the adjacent parts whose concatenation has the lowest
// rank (leftmost on ties) until none has one.
func referenceMerge(rank map[string]int, piece string) []string {
	parts := strings.Split(piece, "")
	for {
		best, bestRank := -1, 0
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := rank[parts[i]+parts[i+1]]; ok && (best < 0 || r < bestRank) {
				best, bestRank = i, r
			}
		}
		if best < 0 {
			return parts
		}
		parts[best] += parts[best+1]
		parts = slices.Delete(parts, best+1, best+2)
	}
}

// TestLoadGPT2LongChains: a vocabulary of long merge chains (a, aa, aaa,
// …) loads in time linear in its size (listing every split of every token
// took 28 s for 4.2 MB) and encodes as tiktoken's merge does, with the
// tokens longer than the splits newGPT2 lists.
func TestLoadGPT2LongChains(t *testing.T) {
	const n = 1500 // tokens a^2 … a^n: 1.1 MB of vocabulary
	extra := map[string]int{}
	rank := map[string]int{}
	var merges strings.Builder
	merges.WriteString("#version: 0.2\n")
	id := 256
	add := func(left, right string) {
		tok := left + right
		extra[tok], rank[tok] = id, id
		fmt.Fprintf(&merges, "%s %s\n", left, right)
		id++
	}
	for k := 2; k <= n; k++ {
		add(strings.Repeat("a", k-1), "a")
		if k <= 100 {
			add(strings.Repeat("b", k-1), "b")
		}
	}
	add("a", "b")
	add(strings.Repeat("a", 70), strings.Repeat("b", 70))
	g, err := tokenizer.LoadGPT2(writeBPEFiles(t, extra, merges.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, piece := range []string{
		strings.Repeat("a", n), strings.Repeat("a", n+1), strings.Repeat("a", 3*n+7),
		strings.Repeat("a", 70) + strings.Repeat("b", 70), strings.Repeat("a", 65) + "b" + strings.Repeat("a", 200),
		strings.Repeat("ab", 40), strings.Repeat("b", 250),
	} {
		var want []int
		for _, p := range referenceMerge(rank, piece) {
			if len(p) == 1 {
				want = append(want, int(p[0]))
			} else {
				want = append(want, extra[p])
			}
		}
		if got := g.Encode(piece); !slices.Equal(got, want) {
			t.Errorf("Encode(%d bytes %.8q…) = %v, want %v", len(piece), piece, got, want)
		}
		if got := g.Decode(g.Encode(piece)); got != piece {
			t.Errorf("Decode(Encode(%.8q…)) differs", piece)
		}
	}
}

// FuzzUnmarshal: whatever the definition, Unmarshal returns a tokenizer
// or an error, never panics, and allocates no more than the bounds on a
// BPE's tokens allow (twice MaxBPETotalBytes) besides 64 bytes per byte of
// the definition (its JSON decoding) and 1 MiB; a tokenizer it returns
// decodes its own encoding of a short text.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"kind":"bpe","merges":[[97,97],[256,256]]}`,
		`{"kind":"bpe","merges":[[0,0],[256,256],[257,257],[258,258],[259,259],[260,260]]}`,
		`{"kind":"char","chars":"abc \n"}`,
		`{"kind":"gpt2","vocab":{"a":0},"merges":[]}`,
		`{"kind":"bpe","merges":[[0,0],[0,0]]}`,
		`{"kind":"bpe","merges":[[300,1]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var tok tokenizer.Tokenizer
		var err error
		alloc := allocated(func() { tok, err = tokenizer.Unmarshal(b) })
		if limit := 2*uint64(tokenizer.MaxBPETotalBytes) + 64*uint64(len(b)) + 1<<20; alloc > limit {
			t.Errorf("%d bytes of definition allocated %d bytes (limit %d)", len(b), alloc, limit)
		}
		if err != nil {
			return
		}
		const text = "abc \n"
		if tok.Kind() != "char" {
			if got := tok.Decode(tok.Encode(text)); got != text {
				t.Errorf("Decode(Encode(%q)) = %q", text, got)
			}
		}
	})
}
