package tokenizer

import "slices"

// referenceTrainBPE is TrainBPE as first written: every merge scans all
// pairs for the most frequent one and recounts every word that holds it.
// It is quadratic in the text on texts of long chunks, and kept as the
// reference that the incremental TrainBPE must agree with merge for merge.
func referenceTrainBPE(text []byte, vocabSize int) [][2]int {
	counts := map[string]int{}
	for _, part := range sampleWindows(text, BPETrainBytes, 64) {
		for s := part; len(s) > 0; {
			n := chunkLen(s)
			counts[string(s[:n])]++
			s = s[n:]
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	type word struct {
		sym []int
		n   int
	}
	words := make([]word, len(keys))
	pairs := map[[2]int]int{}
	where := map[[2]int][]int{}
	for i, k := range keys {
		w := word{sym: make([]int, len(k)), n: counts[k]}
		for j := range len(k) {
			w.sym[j] = int(k[j])
		}
		words[i] = w
		for j := 0; j+1 < len(w.sym); j++ {
			p := [2]int{w.sym[j], w.sym[j+1]}
			pairs[p] += w.n
			where[p] = append(where[p], i)
		}
	}
	var merges [][2]int
	for len(merges) < vocabSize-256 {
		best, bestN := [2]int{}, 1
		for p, n := range pairs {
			if n > bestN || (n == bestN && n > 1 && (p[0] < best[0] || (p[0] == best[0] && p[1] < best[1]))) {
				best, bestN = p, n
			}
		}
		if bestN < 2 {
			break
		}
		id := 256 + len(merges)
		merges = append(merges, best)
		ws := where[best]
		delete(where, best)
		for k, wi := range ws {
			if k > 0 && ws[k-1] == wi {
				continue
			}
			w := &words[wi]
			if !slices.Contains(refPairsOf(w.sym), best) {
				continue
			}
			for j := 0; j+1 < len(w.sym); j++ {
				p := [2]int{w.sym[j], w.sym[j+1]}
				if pairs[p] -= w.n; pairs[p] <= 0 {
					delete(pairs, p)
				}
			}
			w.sym = mergePair(w.sym, best, id)
			for j := 0; j+1 < len(w.sym); j++ {
				p := [2]int{w.sym[j], w.sym[j+1]}
				pairs[p] += w.n
				if l := where[p]; len(l) == 0 || l[len(l)-1] != wi {
					where[p] = append(l, wi)
				}
			}
		}
	}
	return merges
}

func refPairsOf(sym []int) [][2]int {
	out := make([][2]int, 0, len(sym))
	for j := 0; j+1 < len(sym); j++ {
		out = append(out, [2]int{sym[j], sym[j+1]})
	}
	return out
}

// referenceEncodeChunk is encodeChunk as first written: each step scans
// every adjacent pair for the lowest-ranked merge. Quadratic in the chunk.
func (b *BPE) referenceEncodeChunk(chunk []byte) []int {
	var sym []int
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
