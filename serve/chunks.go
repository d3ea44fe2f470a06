package serve

import "github.com/wickml/wick/nn"

// Chunked prefill by cost. A chunk of T prompt tokens from position p
// costs the model's products for T rows (the weights' multiply-adds per
// row) plus their attention over p+1 … p+T positions, and, for the chunk
// that ends the prompt, the output head's row that samples the first
// token. Attention grows with the position, so chunks of a fixed length
// grow dearer along a long prompt, and the step that carries the last one
// (with the head over a vocabulary of 152K) would stall the running
// streams longer than the first. The engine cuts a prompt instead into
// chunks of at most PrefillChunk tokens whose estimated cost stays within
// that of a whole prompt of PrefillChunk tokens: the same cuts for a
// prompt whatever else runs (they depend on the prompt's length and the
// model alone, which batch invariance needs), each chunk the most tokens
// that fit.

// costModel is a model's multiply-adds per step row, as chunk planning
// estimates them.
type costModel struct {
	perRow  float64 // the products' multiply-adds per row (the weights but embeddings and head)
	perKey  float64 // attention's per query and key, over all layers (2·H·D each)
	head    float64 // the output head's for one row (vocabulary × hidden)
	budget  float64 // the cost of a whole prompt of PrefillChunk tokens
	maxRows int     // PrefillChunk
}

// newCostModel estimates m's costs: its parameters of two dimensions or
// more whose first is the vocabulary are the embeddings and head, the
// others are products every row meets.
func newCostModel(m nn.BatchLM, chunk int) costModel {
	layers, hkv, d := m.KVShape()
	var c costModel
	hidden := 0
	for _, p := range m.Parameters() {
		if p.Dim() >= 2 && p.Size(0) == m.VocabSize() {
			hidden = p.Size(1)
			continue
		}
		if p.Dim() >= 2 {
			c.perRow += float64(p.Numel())
		}
	}
	heads := hkv * d // the query heads' width: the hidden size, or as Llama's config says
	switch m := m.(type) {
	case *nn.GPT:
		heads = m.Config.NEmbd
	case *nn.Llama:
		heads = m.Config.NumAttentionHeads * m.Config.HeadDim
	}
	c.perKey = float64(layers) * 2 * float64(heads)
	c.head = float64(m.VocabSize()) * float64(hidden)
	c.maxRows = chunk
	c.budget = c.cost(0, chunk, true)
	return c
}

// cost is the estimated cost of prefilling positions p … p+t−1, with the
// head's row when last.
func (c costModel) cost(p, t int, last bool) float64 {
	keys := float64(t)*float64(p) + float64(t)*float64(t+1)/2
	x := float64(t)*c.perRow + keys*c.perKey
	if last {
		x += c.head
	}
	return x
}

// chunk returns the length of the prompt chunk from position p of a
// prompt of n tokens: the most tokens, at most maxRows, whose cost fits
// the budget, and at least one.
func (c costModel) chunk(p, n int) int {
	t := min(c.maxRows, n-p)
	for t > 1 && c.cost(p, t, p+t == n) > c.budget {
		t--
	}
	return t
}
