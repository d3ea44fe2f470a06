package nn

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// LayerNorm normalises over the last dimension and applies a learned scale
// and (optionally) shift, like nanoGPT's LayerNorm (torch.nn.LayerNorm with
// an optional bias). Weight is [N] (ones), Bias is [N] (zeros) or nil.
type LayerNorm struct {
	Weight *tensor.Tensor
	Bias   *tensor.Tensor
	N      int
	Eps    float32
}

var _ Module = (*LayerNorm)(nil)

// NewLayerNorm returns a LayerNorm over n features with eps 1e-5. It panics
// if n is not positive.
func NewLayerNorm(n int, bias bool) *LayerNorm {
	if n <= 0 {
		panic(&tensor.Error{Pkg: "nn", Op: "NewLayerNorm", Msg: fmt.Sprintf("size must be positive, got %d", n)})
	}
	ln := &LayerNorm{Weight: tensor.Ones(n).RequiresGrad(), N: n, Eps: 1e-5}
	if bias {
		ln.Bias = tensor.Zeros(n).RequiresGrad()
	}
	return ln
}

// Forward normalises x [..., N]. It panics if x's last dimension is not N.
// Bfloat16 or float16 weights (ToDType) are widened to x's dtype: with
// float32 activations the statistics and the product are float32.
func (ln *LayerNorm) Forward(x *tensor.Tensor) *tensor.Tensor {
	return x.LayerNorm(asDTypeOf(ln.Weight, x), asDTypeOf(ln.Bias, x), ln.Eps)
}

// NamedParameters returns weight and (if present) bias.
func (ln *LayerNorm) NamedParameters() []NamedParam {
	ps := []NamedParam{{"weight", ln.Weight}}
	if ln.Bias != nil {
		ps = append(ps, NamedParam{"bias", ln.Bias})
	}
	return ps
}

// Parameters returns weight and (if present) bias.
func (ln *LayerNorm) Parameters() []*tensor.Tensor { return params(ln.NamedParameters()) }

// Train does nothing: LayerNorm behaves the same in both modes.
func (ln *LayerNorm) Train() {}

// Eval does nothing: LayerNorm behaves the same in both modes.
func (ln *LayerNorm) Eval() {}

// String prints the layer like PyTorch.
func (ln *LayerNorm) String() string {
	return leafString(fmt.Sprintf("LayerNorm((%d,), eps=%s, bias=%s)", ln.N, pyFloat(float64(ln.Eps)), pyBool(ln.Bias != nil)), NumParams(ln))
}
