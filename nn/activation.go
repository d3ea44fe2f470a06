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
	if p < 0 || p > 1 {
		panic(fmt.Sprintf("nn: NewDropout: probability has to be between 0 and 1, got %v", p))
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
	panic(&tensor.Error{Op: "GELU", Msg: fmt.Sprintf("approximate must be \"none\" or \"tanh\", got %q", g.Approximate)})
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
