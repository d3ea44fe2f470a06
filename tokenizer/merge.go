package tokenizer

import "math"

// noRank marks a pair of adjacent parts whose concatenation is no token.
const noRank = math.MaxInt32

// pairKey packs the ids of two adjacent parts into a map key.
func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// merged is what two adjacent parts become: the token of their
// concatenated bytes and its rank (lower ranks merge first).
type merged struct {
	rank, id int32
}

// pair returns the rank and id of the token that parts a and b make,
// or noRank.
func (g *GPT2) pair(a, b int32) (int32, int32) {
	if m, ok := g.pairs[pairKey(a, b)]; ok {
		return m.rank, m.id
	}
	if da, db := g.decoder[a], g.decoder[b]; len(da)+len(db) > pairSplitMax {
		return g.longPair(da, db)
	}
	return noRank, -1
}

// longPair is pair for two parts of more than pairSplitMax bytes together,
// whose splits newGPT2 does not list: the token of their concatenation,
// looked up by its bytes.
func (g *GPT2) longPair(a, b []byte) (int32, int32) {
	var buf [2 * pairSplitMax]byte
	k := append(append(buf[:0], a...), b...)
	if id, ok := g.encoder[string(k)]; ok && g.rankOf[id] != noRank {
		return g.rankOf[id], id
	}
	return noRank, -1
}

// linearMax is the longest piece merged by linear scans; longer pieces go
// through a heap, so that a long run of one class is not quadratic.
const linearMax = 64

// appendMerged appends the ids of piece, a piece of pre-tokenized text that
// is not itself a token, to out. It is tiktoken's byte-pair merge: start
// from one part per byte, merge the adjacent pair whose concatenation is the
// token of lowest rank (the leftmost such pair on ties) until no adjacent
// pair makes a token.
func (g *GPT2) appendMerged(out []int, piece string) []int {
	n := len(piece)
	if n > linearMax {
		return g.appendMergedHeap(out, piece)
	}
	// id[i] is part i; rank[i] and mid[i] describe merging parts i and i+1.
	var idBuf, rankBuf, midBuf [linearMax]int32
	id, rank, mid := idBuf[:n], rankBuf[:n], midBuf[:n]
	for i := range n {
		id[i] = g.byteID[piece[i]]
	}
	for i := 0; i+1 < n; i++ {
		rank[i], mid[i] = g.pair(id[i], id[i+1])
	}
	m := n
	for m > 1 {
		best, bestRank := -1, int32(noRank)
		for i := 0; i+1 < m; i++ {
			if rank[i] < bestRank {
				best, bestRank = i, rank[i]
			}
		}
		if best < 0 {
			break
		}
		id[best] = mid[best]
		copy(id[best+1:m-1], id[best+2:m])
		copy(rank[best+1:m-1], rank[best+2:m])
		copy(mid[best+1:m-1], mid[best+2:m])
		m--
		if best > 0 {
			rank[best-1], mid[best-1] = g.pair(id[best-1], id[best])
		}
		if best+1 < m {
			rank[best], mid[best] = g.pair(id[best], id[best+1])
		}
	}
	for _, t := range id[:m] {
		out = append(out, int(t))
	}
	return out
}

// appendMergedHeap is appendMerged for long pieces (mergeHeap).
func (g *GPT2) appendMergedHeap(out []int, piece string) []int {
	id := make([]int32, len(piece))
	for i := range id {
		id[i] = g.byteID[piece[i]]
	}
	return mergeHeap(out, id, g.pair)
}

// mergeHeap merges the parts id (rewritten in place) as a byte-pair merge
// does, the adjacent pair of lowest rank first (the leftmost on ties),
// where pair(a, b) returns the rank of merging parts a and b and the part
// it makes (noRank when they do not merge), and appends the result to out.
// The parts form a linked list and the candidate merges a min-heap ordered
// by (rank, position), so each merge costs O(log n): the long pieces of
// GPT-2's and tokenizer.json's BPE go through it. Entries that no longer
// describe two adjacent parts with that rank are skipped when they come up.
func mergeHeap(out []int, id []int32, pair func(a, b int32) (rank, merged int32)) []int {
	n := len(id)
	if n == 0 {
		return out
	}
	next := make([]int32, n) // -1 after the last part
	prev := make([]int32, n) // -1 before the first part
	alive := make([]bool, n)
	for i := range n {
		next[i], prev[i], alive[i] = int32(i+1), int32(i-1), true
	}
	next[n-1] = -1
	var h minHeap
	push := func(i int32) {
		if j := next[i]; j >= 0 {
			if r, _ := pair(id[i], id[j]); r != noRank {
				h.push(uint64(r)<<32 | uint64(i))
			}
		}
	}
	for i := range n - 1 {
		push(int32(i))
	}
	for len(h) > 0 {
		k := h.pop()
		r, i := int32(k>>32), int32(uint32(k))
		j := next[i]
		if !alive[i] || j < 0 {
			continue
		}
		cr, cid := pair(id[i], id[j])
		if cr != r {
			continue
		}
		id[i] = cid
		alive[j] = false
		next[i] = next[j]
		if next[j] >= 0 {
			prev[next[j]] = i
		}
		if p := prev[i]; p >= 0 {
			push(p)
		}
		push(i)
	}
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, int(id[i]))
	}
	return out
}

// minHeap is a binary min-heap of uint64 keys.
type minHeap []uint64

func (h *minHeap) push(k uint64) {
	*h = append(*h, k)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p] <= a[i] {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *minHeap) pop() uint64 {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		l, s := 2*i+1, i
		if l < len(a) && a[l] < a[s] {
			s = l
		}
		if r := l + 1; r < len(a) && a[r] < a[s] {
			s = r
		}
		if s == i {
			break
		}
		a[i], a[s] = a[s], a[i]
		i = s
	}
	*h = a
	return top
}
