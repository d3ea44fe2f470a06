package nn

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// Dropout zeroes elements with probability P while training and scales the
// rest by 1/(1−P), like torch.nn.Dropout. In evaluation mode it is the
// identity. Modules start in training mode, like PyTorch's.
//
// The masks are drawn from Gen, or from the global generator when Gen is
// nil (see tensor.Generator for what that means on several goroutines).
type Dropout struct {
	P        float32
	Training bool
	Gen      *tensor.Generator // source of the masks; nil: the global generator
}

var _ Module = (*Dropout)(nil)

// NewDropout returns a Dropout layer in training mode. It panics unless
// 0 ≤ p ≤ 1.
func NewDropout(p float32) *Dropout {
	if !(p >= 0 && p <= 1) { // NaN too
		panic(&tensor.Error{Pkg: "nn", Op: "NewDropout", Msg: fmt.Sprintf("probability has to be between 0 and 1, got %v", p)})
	}
	return &Dropout{P: p, Training: true}
}

// Forward applies dropout to x, drawing the mask from d.Gen.
func (d *Dropout) Forward(x *tensor.Tensor) *tensor.Tensor {
	return x.DropoutWith(d.P, d.Training, d.Gen)
}

// NamedParameters returns nothing: Dropout has no parameters.
func (d *Dropout) NamedParameters() []NamedParam { return nil }

// Parameters returns nothing: Dropout has no parameters.
func (d *Dropout) Parameters() []*tensor.Tensor { return nil }

// Train turns dropout on.
func (d *Dropout) Train() { d.Training = true }

// Eval turns dropout off.
func (d *Dropout) Eval() { d.Training = false }

// String prints the layer like PyTorch.
func (d *Dropout) String() string {
	return fmt.Sprintf("Dropout(p=%s, inplace=False)", pyFloat(float64(d.P)))
}

// GELU is the Gaussian error linear unit, like torch.nn.GELU: the exact
// x·Φ(x) when Approximate is "" or "none" (nanoGPT's), and its tanh
// approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) when Approximate
// is "tanh" (GPT-2's, which Hugging Face calls gelu_new).
type GELU struct {
	Approximate string // "" or "none": exact; "tanh": the tanh approximation
}

var _ Module = GELU{}

// Forward applies GELU elementwise. It panics if Approximate is not "",
// "none" or "tanh".
func (g GELU) Forward(x *tensor.Tensor) *tensor.Tensor {
	switch g.Approximate {
	case "", "none":
		return x.GELU()
	case "tanh":
		return x.GELUTanh()
	}
	panic(&tensor.Error{Pkg: "nn", Op: "GELU", Msg: fmt.Sprintf("approximate must be \"none\" or \"tanh\", got %q", g.Approximate)})
}

// NamedParameters returns nothing: GELU has no parameters.
func (GELU) NamedParameters() []NamedParam { return nil }

// Parameters returns nothing: GELU has no parameters.
func (GELU) Parameters() []*tensor.Tensor { return nil }

// Train does nothing.
func (GELU) Train() {}

// Eval does nothing.
func (GELU) Eval() {}

// String prints the layer like PyTorch.
func (g GELU) String() string {
	a := g.Approximate
	if a == "" {
		a = "none"
	}
	return fmt.Sprintf("GELU(approximate='%s')", a)
}

// ReLU is max(x, 0) elementwise, like torch.nn.ReLU().
type ReLU struct{}

var _ Layer = ReLU{}

// Forward applies ReLU elementwise.
func (ReLU) Forward(x *tensor.Tensor) *tensor.Tensor { return x.ReLU() }

// NamedParameters returns nothing: ReLU has no parameters.
func (ReLU) NamedParameters() []NamedParam { return nil }

// Parameters returns nothing: ReLU has no parameters.
func (ReLU) Parameters() []*tensor.Tensor { return nil }

// Train does nothing.
func (ReLU) Train() {}

// Eval does nothing.
func (ReLU) Eval() {}

// String prints the layer like PyTorch.
func (ReLU) String() string { return "ReLU()" }

// Tanh is the hyperbolic tangent elementwise, like torch.nn.Tanh().
type Tanh struct{}

var _ Layer = Tanh{}

// Forward applies tanh elementwise.
func (Tanh) Forward(x *tensor.Tensor) *tensor.Tensor { return x.Tanh() }

// NamedParameters returns nothing: Tanh has no parameters.
func (Tanh) NamedParameters() []NamedParam { return nil }

// Parameters returns nothing: Tanh has no parameters.
func (Tanh) Parameters() []*tensor.Tensor { return nil }

// Train does nothing.
func (Tanh) Train() {}

// Eval does nothing.
func (Tanh) Eval() {}

// String prints the layer like PyTorch.
func (Tanh) String() string { return "Tanh()" }

// Sigmoid is 1/(1+e^−x) elementwise, like torch.nn.Sigmoid().
type Sigmoid struct{}

var _ Layer = Sigmoid{}

// Forward applies the logistic sigmoid elementwise.
func (Sigmoid) Forward(x *tensor.Tensor) *tensor.Tensor { return x.Sigmoid() }

// NamedParameters returns nothing: Sigmoid has no parameters.
func (Sigmoid) NamedParameters() []NamedParam { return nil }

// Parameters returns nothing: Sigmoid has no parameters.
func (Sigmoid) Parameters() []*tensor.Tensor { return nil }

// Train does nothing.
func (Sigmoid) Train() {}

// Eval does nothing.
func (Sigmoid) Eval() {}

// String prints the layer like PyTorch.
func (Sigmoid) String() string { return "Sigmoid()" }
