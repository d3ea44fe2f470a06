package nn

import (
	"fmt"
	"math"

	"github.com/wickml/wick/tensor"
)

// Linear applies y = x·Wᵀ + b, like torch.nn.Linear. Weight has PyTorch's
// layout [out, in]; Bias is [out] or nil.
type Linear struct {
	Weight *tensor.Tensor
	Bias   *tensor.Tensor
	In     int
	Out    int

	lora *loraAdapter // set by ApplyLoRA; nil for a plain layer
}

var _ Module = (*Linear)(nil)

// NewLinear returns a Linear layer from in to out features, initialised like
// PyTorch (kaiming-uniform: weight and bias uniform in ±1/√in), from the
// global generator. NewLinear panics if in or out is not positive.
func NewLinear(in, out int, bias bool) *Linear { return NewLinearWith(in, out, bias, nil) }

// NewLinearWith is NewLinear with the initial weights drawn from gen (the
// global generator if gen is nil). NewLinearWith panics if in or out is
// not positive.
func NewLinearWith(in, out int, bias bool, gen *tensor.Generator) *Linear {
	if in <= 0 || out <= 0 {
		panic(&tensor.Error{Pkg: "nn", Op: "NewLinear", Msg: fmt.Sprintf("in and out features must be positive, got in=%d out=%d", in, out)})
	}
	bound := 1 / math.Sqrt(float64(in))
	l := &Linear{In: in, Out: out}
	l.Weight = tensor.Zeros(out, in).UniformInitWith(-bound, bound, gen).RequiresGrad()
	if bias {
		l.Bias = tensor.Zeros(out).UniformInitWith(-bound, bound, gen).RequiresGrad()
	}
	return l
}

// Forward applies the layer to x [..., in] and returns [..., out]. It
// panics if x's last dimension is not In. A bfloat16 or float16 layer (on
// the CPU) takes float32 inputs as well as inputs of its dtype: the
// product sums in float32 (tensor.MatMul) and the result is float32 for a
// float32 x, the bias cast to it.
func (l *Linear) Forward(x *tensor.Tensor) *tensor.Tensor {
	if x.Dim() == 0 || x.Size(-1) != l.In {
		panic(&tensor.Error{Pkg: "nn", Op: "Linear", Msg: fmt.Sprintf("input of shape %v does not end in in_features=%d", x.Shape(), l.In)})
	}
	y := x.MatMul(l.Weight.T())
	if l.Bias != nil {
		y = y.Add(l.Bias.ToDType(y.DType()))
	}
	if a := l.lora; a != nil && !a.merged {
		y = y.Add(a.delta(x))
	}
	return y
}

// NamedParameters returns weight and (if present) bias.
func (l *Linear) NamedParameters() []NamedParam {
	ps := []NamedParam{{"weight", l.Weight}}
	if l.Bias != nil {
		ps = append(ps, NamedParam{"bias", l.Bias})
	}
	return ps
}

// Parameters returns weight and (if present) bias.
func (l *Linear) Parameters() []*tensor.Tensor { return params(l.NamedParameters()) }

// Train turns on the dropout of a LoRA adapter on the layer, if any;
// a plain Linear behaves the same in both modes.
func (l *Linear) Train() {
	if l.lora != nil {
		l.lora.drop.Train()
	}
}

// Eval turns off the dropout of a LoRA adapter on the layer, if any.
func (l *Linear) Eval() {
	if l.lora != nil {
		l.lora.drop.Eval()
	}
}

// String prints the layer like PyTorch.
func (l *Linear) String() string {
	return leafString(fmt.Sprintf("Linear(in_features=%d, out_features=%d, bias=%s)", l.In, l.Out, pyBool(l.Bias != nil)), NumParams(l))
}
