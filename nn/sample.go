package nn

import (
	"container/heap"
	"slices"
	"sort"
)

// Top-k and top-p without sorting the vocabulary.
//
// keepTopK needs the k-th largest logit of a row and keepTopP the most
// likely tokens of a row in order until their probabilities reach p. Both
// once sorted the whole row: about 0.1 s per token for a vocabulary of
// 152K entries, more than a forward pass of a small model. kthLargest and
// nucleus find the same values from a selection of the row's largest
// entries, and give the results of the sort exactly (the rows with a NaN,
// whose sort order is not defined, still go through the sort).

// kthLargest returns the k-th largest of vals (1 ≤ k ≤ len(vals)),
// counting equal values: sorted descending, vals[k-1].
func kthLargest(vals []float32, k int) float32 {
	n := len(vals)
	if k > n/8 || slices.ContainsFunc(vals, func(v float32) bool { return v != v }) {
		sorted := slices.Clone(vals)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] > sorted[j] })
		return sorted[k-1]
	}
	// a min-heap of the k largest so far: its top is the k-th largest
	h := minHeap(slices.Clone(vals[:k]))
	heap.Init(&h)
	for _, v := range vals[k:] {
		if v > h[0] {
			h[0] = v
			heap.Fix(&h, 0)
		}
	}
	return h[0]
}

type minHeap []float32

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(float32)) }
func (h *minHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// nucleus returns the tokens that keepTopP keeps of a row whose
// probabilities are pr: in the order of a stable sort by descending
// probability, the first token and every next one while the sum of those
// before it is below p (the sum taken in that order, in float32). It looks
// at the row's largest probabilities only, more of them until the kept
// set ends among them; ok is false when it would have to look at most of
// the row (or pr holds a NaN), and then the caller sorts.
func nucleus(pr []float32, p float32) (keep []int, ok bool) {
	n := len(pr)
	if slices.ContainsFunc(pr, func(v float32) bool { return v != v }) {
		return nil, false
	}
	for m := 256; m <= n/8; m *= 4 {
		t := kthLargest(pr, m)
		// every token at or above the m-th largest probability, in index
		// order, then stably by probability: the first tokens of the
		// whole row's stable order, since all the others are less likely
		var cand []int
		for i, v := range pr {
			if v >= t {
				cand = append(cand, i)
			}
		}
		sort.SliceStable(cand, func(a, b int) bool { return pr[cand[a]] > pr[cand[b]] })
		var sum float32
		for k, i := range cand {
			if k > 0 && sum >= p {
				return cand[:k], true
			}
			sum += pr[i]
		}
		// the kept set may go on past the candidates: look at more
	}
	return nil, false
}
