package data

import "github.com/wickml/wick/tensor"

// Sampler draws batches of random windows from a token array, like nanoGPT's
// get_batch: each row of x is block consecutive ids starting at an offset
// uniform in [0, len-block), and y is x shifted by one.
type Sampler struct {
	tokens       *Tokens
	batch, block int
	gen          *tensor.Generator
}

// NewSampler returns a sampler of batch×block windows of tokens, drawing
// offsets from gen. tokens must hold at least block+1 ids.
func NewSampler(tokens *Tokens, batch, block int, gen *tensor.Generator) *Sampler {
	if tokens.Len() < block+1 {
		panic("data: NewSampler: fewer than block+1 tokens")
	}
	return &Sampler{tokens: tokens, batch: batch, block: block, gen: gen}
}

// Generator returns the generator the sampler draws from, so that its state
// can be saved and restored.
func (s *Sampler) Generator() *tensor.Generator { return s.gen }

// Next returns the inputs and targets of one batch, each batch*block ids in
// row-major order.
func (s *Sampler) Next() (x, y []int) {
	x = make([]int, s.batch*s.block)
	y = make([]int, s.batch*s.block)
	hi := s.tokens.Len() - s.block
	for b := range s.batch {
		off := s.gen.IntN(hi)
		row := b * s.block
		for t := range s.block {
			x[row+t] = s.tokens.At(off + t)
			y[row+t] = s.tokens.At(off + t + 1)
		}
	}
	return x, y
}
