package nn

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// Embedding is a lookup table of Num vectors of size Dim, like
// torch.nn.Embedding. Weight is [Num, Dim].
type Embedding struct {
	Weight *tensor.Tensor
	Num    int
	Dim    int
}

var _ Module = (*Embedding)(nil)

// NewEmbedding returns an embedding table initialised like PyTorch
// (standard normal), from the global generator. It panics if num or dim is
// not positive.
func NewEmbedding(num, dim int) *Embedding { return NewEmbeddingWith(num, dim, nil) }

// NewEmbeddingWith is NewEmbedding with the initial table drawn from gen
// (the global generator if gen is nil). It panics if num or dim is not
// positive.
func NewEmbeddingWith(num, dim int, gen *tensor.Generator) *Embedding {
	if num <= 0 || dim <= 0 {
		panic(&tensor.Error{Pkg: "nn", Op: "NewEmbedding", Msg: fmt.Sprintf("sizes must be positive, got num=%d dim=%d", num, dim)})
	}
	return &Embedding{Weight: tensor.Zeros(num, dim).NormalInitWith(0, 1, gen).RequiresGrad(), Num: num, Dim: dim}
}

// Forward looks up the rows at the Int64 indices idx (any shape) and
// returns idx.shape + [Dim]. It panics if idx is not Int64 or holds an
// index outside [0, Num).
func (e *Embedding) Forward(idx *tensor.Tensor) *tensor.Tensor {
	return tensor.Embedding(e.Weight, idx)
}

// NamedParameters returns the weight.
func (e *Embedding) NamedParameters() []NamedParam { return []NamedParam{{"weight", e.Weight}} }

// Parameters returns the weight.
func (e *Embedding) Parameters() []*tensor.Tensor { return []*tensor.Tensor{e.Weight} }

// Train does nothing: Embedding behaves the same in both modes.
func (e *Embedding) Train() {}

// Eval does nothing: Embedding behaves the same in both modes.
func (e *Embedding) Eval() {}

// String prints the layer like PyTorch.
func (e *Embedding) String() string {
	return leafString(fmt.Sprintf("Embedding(%d, %d)", e.Num, e.Dim), e.Num*e.Dim)
}
