package nn

import (
	"fmt"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// SiLU is the sigmoid-weighted linear unit x·σ(x) (torch.nn.SiLU, Hugging
// Face's "silu" hidden_act), composed from Mul and Sigmoid.
type SiLU struct{}

var _ Module = SiLU{}

// Forward applies SiLU elementwise.
func (SiLU) Forward(x *tensor.Tensor) *tensor.Tensor { return x.Mul(x.Sigmoid()) }

// NamedParameters returns nothing: SiLU has no parameters.
func (SiLU) NamedParameters() []NamedParam { return nil }

// Parameters returns nothing: SiLU has no parameters.
func (SiLU) Parameters() []*tensor.Tensor { return nil }

// Train does nothing.
func (SiLU) Train() {}

// Eval does nothing.
func (SiLU) Eval() {}

// String prints "SiLU()".
func (SiLU) String() string { return "SiLU()" }

// GatedMLP is the gated feed-forward layer of the Llama family (SwiGLU
// with SiLU): down_proj(silu(gate_proj(x)) · up_proj(x)), Hugging Face's
// LlamaMLP, with its names gate_proj, up_proj and down_proj. The gating
// silu(gate)·up is tensor.SwiGLU, one fused kernel each way on the CPU and
// CUDA backends (Act names the activation; Forward does not call it).
//
// A frozen gate: when neither gate_proj's nor up_proj's own weight or bias
// requires a gradient (a frozen base model, as with LoRA on the attention
// projections, or adapters on these projections over a frozen base), the
// layer keeps only its input for the backward pass and recomputes gate and
// up there (with tensor.Checkpoint: the same bits, the adapters' dropout
// masks included), instead of keeping both [..., Inter] products, which
// SwiGLU's derivative reads. Frozen, nothing else reads the input's data,
// so this keeps Hidden floats a token where the plain graph keeps
// 2·Inter (a fifth of it at SmolLM2's shapes), for two more products of
// the layer's input in the backward pass. A layer whose gate or up weights
// are trained (a full fine-tune) keeps its input for their gradients
// anyway and runs the plain graph; so does a layer inside a region that
// is itself recomputed (Llama.ActivationCheckpointing, Checkpointed),
// which holds one layer's intermediates at a time. KeepActivations turns
// the recomputation off.
type GatedMLP struct {
	GateProj *Linear // [Inter, Hidden]
	UpProj   *Linear // [Inter, Hidden]
	DownProj *Linear // [Hidden, Inter]
	Act      SiLU

	// KeepActivations keeps gate_proj's and up_proj's outputs for the
	// backward pass even when both are frozen: a faster backward pass for
	// 2·Inter − Hidden more floats a token kept (see GatedMLP).
	KeepActivations bool
}

var _ Module = (*GatedMLP)(nil)

// NewGatedMLP returns a gated MLP from hidden to inter features and back,
// its Linear layers (with biases if bias) initialised from gen like
// NewLinearWith. It panics if a size is not positive.
func NewGatedMLP(hidden, inter int, bias bool, gen *tensor.Generator) *GatedMLP {
	if hidden <= 0 || inter <= 0 {
		panic(&tensor.Error{Pkg: "nn", Op: "NewGatedMLP", Msg: fmt.Sprintf("sizes must be positive, got hidden %d and intermediate %d", hidden, inter)})
	}
	return &GatedMLP{
		GateProj: NewLinearWith(hidden, inter, bias, gen),
		UpProj:   NewLinearWith(hidden, inter, bias, gen),
		DownProj: NewLinearWith(inter, hidden, bias, gen),
	}
}

// Forward applies the layer to x [..., Hidden]. It panics if x's last
// dimension is not Hidden.
func (m *GatedMLP) Forward(x *tensor.Tensor) *tensor.Tensor {
	return tensor.Scope(func() *tensor.Tensor {
		if m.recomputesGate() {
			// the adapters of gate_proj and up_proj go along as inputs,
			// so that they learn through the recomputation
			in := append([]*tensor.Tensor{x}, trainables(m.GateProj)...)
			return m.DownProj.Forward(tensor.Checkpoint(func(in []*tensor.Tensor) *tensor.Tensor { return m.gate(in[0]) },
				append(in, trainables(m.UpProj)...)...))
		}
		return m.DownProj.Forward(m.gate(x))
	})
}

// gate returns silu(gate_proj(x)) · up_proj(x).
func (m *GatedMLP) gate(x *tensor.Tensor) *tensor.Tensor {
	return tensor.SwiGLU(m.GateProj.Forward(x), m.UpProj.Forward(x))
}

// recomputesGate reports whether Forward recomputes gate and up in the
// backward pass rather than keep them (see GatedMLP): a recorded pass, gate_proj's
// and up_proj's own parameters frozen, outside a recomputed region.
func (m *GatedMLP) recomputesGate() bool {
	if m.KeepActivations || !autograd.Enabled() || inRecomputedRegion() {
		return false
	}
	for _, l := range []*Linear{m.GateProj, m.UpProj} {
		if l.Weight.IsRequiringGrad() || l.Bias != nil && l.Bias.IsRequiringGrad() {
			return false
		}
	}
	return true
}

// NamedParameters returns gate_proj's, up_proj's and down_proj's parameters.
func (m *GatedMLP) NamedParameters() []NamedParam {
	ps := prefixed("gate_proj", m.GateProj.NamedParameters())
	ps = append(ps, prefixed("up_proj", m.UpProj.NamedParameters())...)
	return append(ps, prefixed("down_proj", m.DownProj.NamedParameters())...)
}

// Parameters returns the parameters in the order of NamedParameters.
func (m *GatedMLP) Parameters() []*tensor.Tensor { return params(m.NamedParameters()) }

// Train puts the layer's Linear layers in training mode (the dropout of
// LoRA adapters on them; the layer itself has none).
func (m *GatedMLP) Train() { eachChild(m.NamedChildren(), Module.Train) }

// Eval puts the layer's Linear layers in evaluation mode.
func (m *GatedMLP) Eval() { eachChild(m.NamedChildren(), Module.Eval) }

// String prints the module tree.
func (m *GatedMLP) String() string {
	return treeString("GatedMLP", NumParams(m), []child{{"gate_proj", m.GateProj}, {"up_proj", m.UpProj}, {"down_proj", m.DownProj}, {"act_fn", m.Act}})
}
