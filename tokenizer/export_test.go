package tokenizer

// NewGPT2Cold returns a copy of g with an empty word cache, for benchmarks
// of encoding text for the first time.
func NewGPT2Cold(g *GPT2) *GPT2 {
	c := *g
	c.cache = newWordCache()
	return &c
}

// MergeBoth returns the ids of piece merged by the linear scan and by the
// heap.
func MergeBoth(g *GPT2, piece string) (linear, heap []int) {
	if len(piece) <= linearMax {
		linear = g.appendMerged(nil, piece)
	}
	return linear, g.appendMergedHeap(nil, piece)
}

// PieceLen is pieceLen.
var PieceLen = pieceLen
