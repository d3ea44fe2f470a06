package tokenizer

import (
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// BPE is a byte-level byte-pair-encoding tokenizer trained on a corpus
// (GPT-2's scheme without its byte-to-unicode remapping): ids 0-255 are the
// bytes, and id 256+i is the i-th merge of two earlier ids. Text is first
// cut into chunks (a word with its leading space, a number, a run of
// punctuation, a run of whitespace) and merges never cross chunk
// boundaries. Any text encodes. Its methods may be called from many
// goroutines at once.
type BPE struct {
	merges [][2]int
	rank   map[[2]int]int // pair → merge index
	bytes  [][]byte       // id → the bytes it stands for
}

var (
	_ Tokenizer   = (*BPE)(nil)
	_ EachEncoder = (*BPE)(nil)
)

// BPETrainBytes bounds the text TrainBPE learns merges from: longer corpora
// are sampled in evenly spaced windows of this total size.
const BPETrainBytes = 2 << 20

// TrainBPE is TrainBPEContext without cancellation.
func TrainBPE(text []byte, vocabSize int) (*BPE, error) {
	return TrainBPEContext(context.Background(), text, vocabSize)
}

// TrainBPEContext learns up to vocabSize-256 merges from text, most
// frequent pair first (ties broken by the smaller pair, so training is
// deterministic). It stops early when no pair occurs twice, and returns
// ctx's error as soon as it sees ctx cancelled (it looks before every
// merge, every 64 KiB while counting chunks and every 4096 chunks while
// laying them out).
//
// The base vocabulary is the 256 byte values, whatever the text: a text
// with more distinct characters than vocabSize still encodes, each rare
// character as its UTF-8 bytes, as in GPT-2. Merges are learned over the
// distinct chunks of (a sample of at most BPETrainBytes of) the text, laid
// end to end as linked lists of symbols. Each pair keeps its count and the
// positions where it was made, and a max-heap keyed by (count, pair) with
// lazily refreshed entries finds the next merge; a merge touches only the
// positions of its pair and their two neighbours. With N the bytes of
// distinct chunks and M the merges, training takes O(N log N + M log N)
// time and O(N) memory: each position is merged away at most once, and each
// merge adds at most two positions to pairs' lists.
func TrainBPEContext(ctx context.Context, text []byte, vocabSize int) (*BPE, error) {
	if vocabSize < 256 || vocabSize > 1<<16 {
		return nil, fmt.Errorf("tokenizer: bpe vocabulary size %d is out of range (want 256 to 65536)", vocabSize)
	}
	// Count the chunks of (a sample of) the text.
	counts := map[string]int{}
	for _, part := range sampleWindows(text, BPETrainBytes, 64) {
		next := 0
		for s := part; len(s) > 0; {
			if done := len(part) - len(s); done >= next {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				next = done + 64<<10
			}
			n := chunkLen(s)
			counts[string(s[:n])]++
			s = s[n:]
		}
	}
	keys := make([]string, 0, len(counts))
	total := 0
	for k := range counts {
		keys = append(keys, k)
		total += len(k)
	}
	slices.Sort(keys)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := newBPETrainer(total)
	for i, k := range keys {
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		t.addWord(k, counts[k])
	}
	t.countPairs()
	var merges [][2]int
	for len(merges) < vocabSize-256 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, ok := t.best()
		if !ok {
			break
		}
		merges = append(merges, [2]int{int(p >> 16), int(p & 0xffff)})
		t.merge(p, int32(255+len(merges)))
	}
	return newBPE(merges)
}

// bpeTrainer holds the state of TrainBPEContext. The symbols of all
// distinct chunks lie end to end in sym; prev and next link the live
// symbols of one chunk (-1 at its ends), and a merged-away symbol is -1 in
// sym. A pair of ids a, b < 1<<16 is the key a<<16 | b, so keys order pairs
// as (a, b) do.
type bpeTrainer struct {
	sym, prev, next []int32
	weight          []int32 // the count of the chunk each position belongs to
	pairs           map[uint32]int32
	stats           []pairStat // indexed by pairs' values
	heap            pairHeap
	merges          int32 // merges done, the stamp of pairStat.touched
}

// pairStat is what the trainer knows of one pair.
type pairStat struct {
	count   int
	pos     []int32 // positions of the pair's left symbol, possibly stale or repeated
	touched int32   // the merge that last raised count
}

func newBPETrainer(n int) *bpeTrainer {
	return &bpeTrainer{sym: make([]int32, 0, n), prev: make([]int32, 0, n), next: make([]int32, 0, n),
		weight: make([]int32, 0, n), pairs: map[uint32]int32{}}
}

// addWord appends the bytes of one chunk seen n times.
func (t *bpeTrainer) addWord(w string, n int) {
	start := int32(len(t.sym))
	for j := range len(w) {
		i := start + int32(j)
		t.sym = append(t.sym, int32(w[j]))
		t.prev = append(t.prev, i-1)
		t.next = append(t.next, i+1)
		t.weight = append(t.weight, int32(n))
	}
	t.prev[start] = -1
	t.next[len(t.next)-1] = -1
}

// stat returns the stats of pair p, creating them.
func (t *bpeTrainer) stat(p uint32) *pairStat {
	i, ok := t.pairs[p]
	if !ok {
		i = int32(len(t.stats))
		t.pairs[p] = i
		t.stats = append(t.stats, pairStat{})
	}
	return &t.stats[i]
}

func trainKey(a, b int32) uint32 { return uint32(a)<<16 | uint32(b) }

// countPairs counts every adjacent pair and fills the heap.
func (t *bpeTrainer) countPairs() {
	for i, j := range t.next {
		if j >= 0 {
			s := t.stat(trainKey(t.sym[i], t.sym[j]))
			s.count += int(t.weight[i])
			s.pos = append(s.pos, int32(i))
		}
	}
	t.heap = make(pairHeap, 0, len(t.pairs))
	for p, i := range t.pairs {
		t.heap = append(t.heap, heapEntry{count: t.stats[i].count, pair: p})
	}
	heap.Init(&t.heap)
}

// best pops the most frequent pair (the smallest of equally frequent ones)
// when it occurs at least twice. An entry whose count is above the pair's
// current count is put back with the current count; one below it is
// dropped (the pair has a newer entry). Every pair with a positive count
// thus keeps an entry at least as high as its count, and the first entry
// popped that is up to date is the true maximum.
func (t *bpeTrainer) best() (uint32, bool) {
	for len(t.heap) > 0 {
		e := heap.Pop(&t.heap).(heapEntry)
		c := t.stats[t.pairs[e.pair]].count
		switch {
		case c == e.count:
			return e.pair, c >= 2
		case c > 0 && c < e.count:
			heap.Push(&t.heap, heapEntry{count: c, pair: e.pair})
		}
	}
	return 0, false
}

// merge replaces every occurrence of pair p by id, left to right within a
// chunk (so a run a a a of the pair (a, a) becomes id a, as mergePair
// does), updating the counts of the neighbouring pairs, and pushes the
// pairs whose counts rose onto the heap.
func (t *bpeTrainer) merge(p uint32, id int32) {
	t.merges++
	a, b := int32(p>>16), int32(p&0xffff)
	st := &t.stats[t.pairs[p]]
	pos := st.pos
	st.pos = nil
	// Left to right within a chunk, which matters for the overlapping
	// occurrences of a pair (a, a); those are listed in order already, and
	// sorting keeps that from resting on how the lists grow.
	slices.Sort(pos)
	var raised []uint32
	add := func(q uint32, n int, at int32) {
		s := t.stat(q)
		s.count += n
		s.pos = append(s.pos, at)
		if s.touched != t.merges {
			s.touched = t.merges
			raised = append(raised, q)
		}
	}
	sub := func(q uint32, n int) { t.stats[t.pairs[q]].count -= n }
	for _, i := range pos {
		j := t.next[i]
		if t.sym[i] != a || j < 0 || t.sym[j] != b {
			continue // stale: merged away or changed since
		}
		n := int(t.weight[i])
		if h := t.prev[i]; h >= 0 {
			sub(trainKey(t.sym[h], a), n)
			add(trainKey(t.sym[h], id), n, h)
		}
		k := t.next[j]
		if k >= 0 {
			sub(trainKey(b, t.sym[k]), n)
			add(trainKey(id, t.sym[k]), n, i)
			t.prev[k] = i
		}
		t.stats[t.pairs[p]].count -= n
		t.sym[i], t.sym[j], t.next[i] = id, -1, k
	}
	for _, q := range raised {
		heap.Push(&t.heap, heapEntry{count: t.stats[t.pairs[q]].count, pair: q})
	}
}

// heapEntry is a pair with its count when the entry was pushed.
type heapEntry struct {
	count int
	pair  uint32
}

// pairHeap is a max-heap of entries by count, then by smallest pair.
type pairHeap []heapEntry

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	return h[i].count > h[j].count || (h[i].count == h[j].count && h[i].pair < h[j].pair)
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(heapEntry)) }
func (h *pairHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// mergePair replaces each non-overlapping occurrence of p in sym, left to
// right, by id.
func mergePair(sym []int, p [2]int, id int) []int {
	out := sym[:0]
	for j := 0; j < len(sym); j++ {
		if j+1 < len(sym) && sym[j] == p[0] && sym[j+1] == p[1] {
			out = append(out, id)
			j++
			continue
		}
		out = append(out, sym[j])
	}
	return out
}

// sampleWindows returns text when it is at most total bytes long, and
// otherwise n evenly spaced windows of total/n bytes, each cut back to
// start and end at a line boundary where possible.
func sampleWindows(text []byte, total, n int) [][]byte {
	if len(text) <= total {
		return [][]byte{text}
	}
	size := total / n
	var out [][]byte
	for i := range n {
		start := int(int64(i) * int64(len(text)-size) / int64(n-1))
		w := text[start : start+size]
		if j := strings.IndexByte(string(w), '\n'); j >= 0 && i > 0 {
			w = w[j+1:]
		}
		out = append(out, w)
	}
	return out
}

// Bounds on a BPE that newBPE checks before it builds anything, so that a
// few merges that double a token's length at every step (a 1 KB
// definition standing for gigabytes) are refused: no token TrainBPE makes
// is longer than the text it learns from (BPETrainBytes), and the bytes of
// all tokens together stay far below what a vocabulary of 65536 ids
// trained on that text holds.
const (
	// MaxBPETokenBytes bounds the bytes one BPE token stands for.
	MaxBPETokenBytes = BPETrainBytes
	// MaxBPETotalBytes bounds the bytes of all tokens of a BPE together.
	MaxBPETotalBytes = 64 << 20
)

// newBPE checks merges and builds the BPE. Every merge must join two ids
// defined before it, appear once, and make a token of at most
// MaxBPETokenBytes; the tokens together may stand for at most
// MaxBPETotalBytes. The lengths are checked from the merges alone, before
// any token's bytes are built.
func newBPE(merges [][2]int) (*BPE, error) {
	if n := 256 + len(merges); n > 1<<16 {
		return nil, fmt.Errorf("tokenizer: bpe vocabulary of %d ids is too large (at most 65536)", n)
	}
	lens := make([]int64, 256, 256+len(merges))
	for i := range lens {
		lens[i] = 1
	}
	total := int64(256)
	for i, m := range merges {
		id := 256 + i
		if m[0] < 0 || m[1] < 0 || m[0] >= id || m[1] >= id {
			return nil, fmt.Errorf("tokenizer: bpe merge %d (%d, %d) refers to an undefined id", i, m[0], m[1])
		}
		n := lens[m[0]] + lens[m[1]]
		if n > MaxBPETokenBytes {
			return nil, fmt.Errorf("tokenizer: bpe merge %d (%d, %d) makes a token of %d bytes, more than the %d a token may have (a corrupt or hostile tokenizer definition)", i, m[0], m[1], n, MaxBPETokenBytes)
		}
		total += n
		if total > MaxBPETotalBytes {
			return nil, fmt.Errorf("tokenizer: bpe merges 0 to %d make tokens of %d bytes in all, more than the %d a vocabulary may have (a corrupt or hostile tokenizer definition)", i, total, MaxBPETotalBytes)
		}
		lens = append(lens, n)
	}
	b := &BPE{merges: merges, rank: make(map[[2]int]int, len(merges)), bytes: make([][]byte, 256, 256+len(merges))}
	for i := range 256 {
		b.bytes[i] = []byte{byte(i)}
	}
	for i, m := range merges {
		if _, dup := b.rank[m]; dup {
			return nil, fmt.Errorf("tokenizer: bpe merge %d (%d, %d) is repeated", i, m[0], m[1])
		}
		b.rank[m] = i
		b.bytes = append(b.bytes, append(slices.Clip(b.bytes[m[0]]), b.bytes[m[1]]...))
	}
	return b, nil
}

// Kind returns "bpe".
func (b *BPE) Kind() string { return "bpe" }

// VocabSize returns 256 plus the number of merges.
func (b *BPE) VocabSize() int { return len(b.bytes) }

// Encode returns the ids of text.
func (b *BPE) Encode(text string) []int {
	out := make([]int, 0, len(text)/3+16)
	b.EncodeEach(context.Background(), []byte(text), func(ids []int) { out = append(out, ids...) })
	return out
}

// EncodeEach encodes text as Encode does, passing the ids to emit a chunk
// of the pre-tokenizer at a time, in order. It returns ctx's error soon
// after ctx is cancelled (it looks every MiB of text, and every 64 Ki
// merges within one long chunk), and nil otherwise. emit must not keep or
// change the slice it is given.
func (b *BPE) EncodeEach(ctx context.Context, text []byte, emit func(ids []int)) error {
	cache := map[string][]int{}
	var sym []int
	next := 0
	for s := text; len(s) > 0; {
		if done := len(text) - len(s); done >= next {
			if err := ctx.Err(); err != nil {
				return err
			}
			next = done + 1<<20
		}
		n := chunkLen(s)
		chunk := s[:n]
		s = s[n:]
		ids, ok := cache[string(chunk)]
		if !ok {
			if len(chunk) > longChunk {
				sym = b.encodeLong(ctx, chunk, sym[:0])
				if err := ctx.Err(); err != nil {
					return err
				}
			} else {
				sym = b.encodeChunk(chunk, sym[:0])
			}
			ids = slices.Clone(sym)
			if len(chunk) <= longChunk { // words repeat; long chunks rarely do
				if len(cache) >= 1<<20 {
					clear(cache)
				}
				cache[string(chunk)] = ids
			}
		}
		emit(ids)
	}
	return nil
}

// encodeChunk applies the merges to the bytes of one chunk, lowest rank
// first, appending the ids to sym. A short chunk is rescanned for its
// lowest-ranked pair after every merge, O(n²) for n bytes and fastest for
// words; a long one goes through encodeLong.
func (b *BPE) encodeChunk(chunk []byte, sym []int) []int {
	if len(chunk) > longChunk {
		return b.encodeLong(context.Background(), chunk, sym)
	}
	for _, c := range chunk {
		sym = append(sym, int(c))
	}
	for len(sym) > 1 {
		best, bestRank := [2]int{}, len(b.merges)
		for j := 0; j+1 < len(sym); j++ {
			p := [2]int{sym[j], sym[j+1]}
			if r, ok := b.rank[p]; ok && r < bestRank {
				best, bestRank = p, r
			}
		}
		if bestRank == len(b.merges) {
			break
		}
		sym = mergePair(sym, best, 256+bestRank)
	}
	return sym
}

// longChunk is the chunk length from which encodeChunk switches to a heap.
const longChunk = 64

// encodeLong is encodeChunk in O(n log n) for a chunk of n bytes: the
// symbols form a linked list and a min-heap holds the adjacent pairs that
// have a merge, by rank and then position, so equal pairs merge left to
// right. A merge of rank r only makes pairs of higher rank (merges refer to
// earlier ids), so every pair of rank r merges before any later one, as in
// the rescanning loop. When ctx is cancelled it stops early and returns
// sym without the chunk's ids; the caller looks at ctx.
func (b *BPE) encodeLong(ctx context.Context, chunk []byte, sym []int) []int {
	n := len(chunk)
	ids := make([]int32, n)
	next := make([]int32, n)
	prev := make([]int32, n)
	for i, c := range chunk {
		ids[i], next[i], prev[i] = int32(c), int32(i+1), int32(i-1)
	}
	next[n-1] = -1
	h := make(rankHeap, 0, n)
	push := func(i int32) {
		if j := next[i]; j >= 0 {
			if r, ok := b.rank[[2]int{int(ids[i]), int(ids[j])}]; ok {
				heap.Push(&h, rankEntry{rank: int32(r), pos: i})
			}
		}
	}
	for i := range int32(n - 1) {
		if r, ok := b.rank[[2]int{int(ids[i]), int(ids[i+1])}]; ok {
			h = append(h, rankEntry{rank: int32(r), pos: i})
		}
	}
	heap.Init(&h)
	for k := 0; len(h) > 0; k++ {
		if k%(1<<16) == 0 && ctx.Err() != nil {
			return sym
		}
		e := heap.Pop(&h).(rankEntry)
		i := e.pos
		j := next[i]
		if ids[i] < 0 || j < 0 {
			continue
		}
		if r, ok := b.rank[[2]int{int(ids[i]), int(ids[j])}]; !ok || int32(r) != e.rank {
			continue // stale: the pair at i changed since
		}
		ids[i], ids[j] = 256+e.rank, -1
		k := next[j]
		next[i] = k
		if k >= 0 {
			prev[k] = i
		}
		if p := prev[i]; p >= 0 {
			push(p)
		}
		push(i)
	}
	for i := int32(0); i >= 0; i = next[i] {
		sym = append(sym, int(ids[i]))
	}
	return sym
}

// rankEntry is a pair of adjacent symbols, by the position of its left one.
type rankEntry struct{ rank, pos int32 }

// rankHeap is a min-heap of pairs by rank, then position.
type rankHeap []rankEntry

func (h rankHeap) Len() int { return len(h) }
func (h rankHeap) Less(i, j int) bool {
	return h[i].rank < h[j].rank || (h[i].rank == h[j].rank && h[i].pos < h[j].pos)
}
func (h rankHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *rankHeap) Push(x any)   { *h = append(*h, x.(rankEntry)) }
func (h *rankHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// Decode returns the text of ids. Ids outside the vocabulary decode to
// U+FFFD, and so do byte sequences that are not valid UTF-8.
func (b *BPE) Decode(ids []int) string {
	var buf []byte
	for _, id := range ids {
		if id >= 0 && id < len(b.bytes) {
			buf = append(buf, b.bytes[id]...)
		} else {
			buf = append(buf, "\uFFFD"...)
		}
	}
	return strings.ToValidUTF8(string(buf), "\uFFFD")
}

// MarshalJSON returns {"kind":"bpe","merges":[[a,b],...]}: the pairs of
// ids that ids 256, 257, … stand for.
func (b *BPE) MarshalJSON() ([]byte, error) {
	m := b.merges
	if m == nil {
		m = [][2]int{}
	}
	return json.Marshal(savedJSON{Kind: "bpe", Merges: m})
}

// Byte classes of the pre-tokenizer. Bytes ≥ 0x80 count as letters, so
// multi-byte characters stay inside words.
const (
	bcLetter = iota
	bcDigit
	bcSpace
	bcPunct
)

func byteClass(c byte) int {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c >= 0x80:
		return bcLetter
	case c >= '0' && c <= '9':
		return bcDigit
	case c == ' ', c == '\n', c == '\t', c == '\r', c == '\v', c == '\f':
		return bcSpace
	}
	return bcPunct
}

// MaxBPEChunk bounds a chunk of the bpe tokenizer's pre-tokenizer, in
// bytes: a longer run of one class (a line of text without whitespace, a
// base64 blob) is cut into pieces of at most this length, ending on a
// UTF-8 character boundary, both when training and when encoding. So the
// memory of training and encoding is bounded whatever the text (about 30
// bytes per byte of one chunk, not of the whole run), and no merge spans
// two pieces. Text of words is never cut.
const MaxBPEChunk = 4096

// chunkLen returns the length of the chunk at the start of s (len(s) > 0),
// in the spirit of GPT-2's pattern: an optional space followed by a run of
// letters, digits or punctuation; or a run of whitespace that leaves its
// last space to the word after it. A chunk is at most MaxBPEChunk bytes.
func chunkLen(s []byte) int {
	j := chunkLenUncut(s)
	if j > MaxBPEChunk {
		j = MaxBPEChunk
		for j > 1 && s[j]&0xc0 == 0x80 { // not inside a UTF-8 character
			j--
		}
	}
	return j
}

// chunkLenUncut is chunkLen without the MaxBPEChunk bound, except that it
// looks no further than MaxBPEChunk+2 bytes: past them the chunk is cut at
// MaxBPEChunk whatever follows (even once the last space of a run of
// whitespace goes to the next word), and scanning the rest of a long run
// for each of its chunks made splitting it quadratic in its length.
func chunkLenUncut(s []byte) int {
	i := 0
	if s[0] == ' ' && len(s) > 1 && byteClass(s[1]) != bcSpace {
		i = 1
	}
	cl := byteClass(s[i])
	j := i + 1
	end := min(len(s), MaxBPEChunk+2)
	for j < end && byteClass(s[j]) == cl {
		j++
	}
	if cl == bcSpace && j-i > 1 && j < len(s) && s[j-1] == ' ' {
		j-- // the space goes with the next word
	}
	return j
}
