package nn

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// RMSNorm scales each vector over the last dimension by the reciprocal of
// its root mean square and by a learned weight, like Hugging Face's
// LlamaRMSNorm: y = weight · (x / √(mean(x²) + eps)). The statistics are
// float32 and the weight multiplies the normalised value (Hugging Face's
// weight * x_normed.to(dtype) order). Weight is [N], ones at first.
// Forward is Tensor.RMSNorm: one fused kernel each way on the CPU and CUDA
// backends.
type RMSNorm struct {
	Weight *tensor.Tensor
	N      int
	Eps    float32
}

var _ Module = (*RMSNorm)(nil)

// NewRMSNorm returns an RMSNorm over n features. It panics if n is not
// positive or eps is negative.
func NewRMSNorm(n int, eps float32) *RMSNorm {
	if n <= 0 || !(eps >= 0) {
		panic(&tensor.Error{Pkg: "nn", Op: "NewRMSNorm", Msg: fmt.Sprintf("size must be positive and eps non-negative, got %d and %v", n, eps)})
	}
	return &RMSNorm{Weight: tensor.Ones(n).RequiresGrad(), N: n, Eps: eps}
}

// Forward normalises x [..., N]. It panics if x's last dimension is not N.
// A bfloat16 or float16 weight (ToDType) is widened to x's dtype: with
// float32 activations, weight.float() * x_normed in float32.
func (r *RMSNorm) Forward(x *tensor.Tensor) *tensor.Tensor {
	if x.Dim() == 0 || x.Size(-1) != r.N {
		panic(&tensor.Error{Pkg: "nn", Op: "RMSNorm", Msg: fmt.Sprintf("input of shape %v does not end in %d features", x.Shape(), r.N)})
	}
	return x.RMSNorm(asDTypeOf(r.Weight, x), r.Eps)
}

// NamedParameters returns weight.
func (r *RMSNorm) NamedParameters() []NamedParam { return []NamedParam{{"weight", r.Weight}} }

// Parameters returns weight.
func (r *RMSNorm) Parameters() []*tensor.Tensor { return []*tensor.Tensor{r.Weight} }

// Train does nothing: RMSNorm acts alike in both modes.
func (r *RMSNorm) Train() {}

// Eval does nothing: RMSNorm acts alike in both modes.
func (r *RMSNorm) Eval() {}

// String prints the layer like PyTorch's repr of LlamaRMSNorm.
func (r *RMSNorm) String() string {
	return leafString(fmt.Sprintf("RMSNorm((%d,), eps=%s)", r.N, pyFloat(float64(r.Eps))), r.N)
}
