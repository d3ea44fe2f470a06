package nn

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// AttentionConfig describes a self-attention layer of the Llama family:
// Hidden features in and out, NHeads query heads and NKVHeads key/value
// heads (NKVHeads divides NHeads: equal for multi-head, fewer for
// grouped-query, one for multi-query attention) of HeadDim features each
// (not necessarily Hidden/NHeads), biases on the q/k/v projections
// (QKVBias) and on the output projection (OBias), and an RMSNorm over each
// query and key head before the rotary embedding (QKNorm, Qwen3's q_norm
// and k_norm, with NormEps).
type AttentionConfig struct {
	Hidden, NHeads, NKVHeads, HeadDim int
	QKVBias, OBias                    bool
	QKNorm                            bool
	NormEps                           float32
}

// Validate reports what is wrong with c, or nil.
func (c AttentionConfig) Validate() error {
	if c.Hidden <= 0 || c.NHeads <= 0 || c.NKVHeads <= 0 || c.HeadDim <= 0 {
		return fmt.Errorf("hidden size %d, heads %d, key/value heads %d and head_dim %d must be positive", c.Hidden, c.NHeads, c.NKVHeads, c.HeadDim)
	}
	if c.NHeads%c.NKVHeads != 0 {
		return fmt.Errorf("key/value heads %d do not divide attention heads %d", c.NKVHeads, c.NHeads)
	}
	if c.HeadDim%2 != 0 {
		return fmt.Errorf("head_dim %d is odd (rotary embeddings rotate pairs)", c.HeadDim)
	}
	return nil
}

// Attention is causal self-attention with rotary position embeddings and
// grouped key/value heads, Hugging Face's LlamaAttention (Qwen2's with
// q/k/v biases, Qwen3's with q_norm and k_norm), with its parameter names
// q_proj, k_proj, v_proj, o_proj, q_norm and k_norm.
type Attention struct {
	QProj, KProj, VProj, OProj *Linear
	QNorm, KNorm               *RMSNorm // nil without QKNorm
	Config                     AttentionConfig
}

var _ Module = (*Attention)(nil)

// NewAttention returns the attention layer of cfg, its Linear layers
// initialised from gen like NewLinearWith. It panics if cfg is invalid.
func NewAttention(cfg AttentionConfig, gen *tensor.Generator) *Attention {
	if err := cfg.Validate(); err != nil {
		panic(&tensor.Error{Pkg: "nn", Op: "NewAttention", Msg: err.Error()})
	}
	a := &Attention{
		QProj:  NewLinearWith(cfg.Hidden, cfg.NHeads*cfg.HeadDim, cfg.QKVBias, gen),
		KProj:  NewLinearWith(cfg.Hidden, cfg.NKVHeads*cfg.HeadDim, cfg.QKVBias, gen),
		VProj:  NewLinearWith(cfg.Hidden, cfg.NKVHeads*cfg.HeadDim, cfg.QKVBias, gen),
		OProj:  NewLinearWith(cfg.NHeads*cfg.HeadDim, cfg.Hidden, cfg.OBias, gen),
		Config: cfg,
	}
	if cfg.QKNorm {
		a.QNorm, a.KNorm = NewRMSNorm(cfg.HeadDim, cfg.NormEps), NewRMSNorm(cfg.HeadDim, cfg.NormEps)
	}
	return a
}

// Forward applies attention to x [B, T, Hidden] at positions 0 … T−1, with
// cos and sin [T, HeadDim] from Rotary.CosSin, and returns [B, T, Hidden].
// It panics if the shapes disagree.
func (a *Attention) Forward(x, cos, sin *tensor.Tensor) *tensor.Tensor {
	return tensor.Scope(func() *tensor.Tensor { return a.forward(x, cos, sin, nil, nil, 0) })
}

// ForwardCached is Forward for x [B, T, Hidden] at positions pos … pos+T−1
// (cos and sin of those positions): it writes the keys and values of x
// into k and v [B, NKVHeads, ≥pos+T, HeadDim] at those positions and
// attends to positions 0 … pos+T−1 of them. With pos 0 it computes what
// Forward does.
func (a *Attention) ForwardCached(x, cos, sin, k, v *tensor.Tensor, pos int) *tensor.Tensor {
	return a.forward(x, cos, sin, k, v, pos)
}

func (a *Attention) forward(x, cos, sin, kc, vc *tensor.Tensor, pos int) *tensor.Tensor {
	c := a.Config
	if x.Dim() != 3 || x.Size(2) != c.Hidden {
		panic(&tensor.Error{Pkg: "nn", Op: "Attention", Msg: fmt.Sprintf("expected input [B, T, %d], got %v", c.Hidden, x.Shape())})
	}
	b, t := x.Size(0), x.Size(1)
	heads := func(z *tensor.Tensor, n int, norm *RMSNorm) *tensor.Tensor { // [B, n, T, D]
		z = z.Reshape(b, t, n, c.HeadDim)
		if norm != nil {
			z = norm.Forward(z)
		}
		return z.Transpose(1, 2)
	}
	q := ApplyRotary(heads(a.QProj.Forward(x), c.NHeads, a.QNorm), cos, sin)
	k := ApplyRotary(heads(a.KProj.Forward(x), c.NKVHeads, a.KNorm), cos, sin)
	v := heads(a.VProj.Forward(x), c.NKVHeads, nil)
	if kc != nil {
		if pos+t > kc.Size(2) {
			panic(&tensor.Error{Pkg: "nn", Op: "Attention.ForwardCached", Msg: fmt.Sprintf("key/value cache of %d positions cannot take %d more after %d", kc.Size(2), t, pos)})
		}
		kc.Slice(2, pos, pos+t).CopyFrom(k)
		vc.Slice(2, pos, pos+t).CopyFrom(v)
		k, v = kc.Slice(2, 0, pos+t), vc.Slice(2, 0, pos+t)
	}
	y := CausalAttention(q, k, v, pos).Transpose(1, 2).Reshape(b, t, c.NHeads*c.HeadDim)
	return a.OProj.Forward(y)
}

// NamedParameters returns q_proj's, k_proj's, v_proj's, o_proj's and (with
// QKNorm) q_norm's and k_norm's parameters, in Hugging Face's order.
func (a *Attention) NamedParameters() []NamedParam {
	ps := prefixed("q_proj", a.QProj.NamedParameters())
	ps = append(ps, prefixed("k_proj", a.KProj.NamedParameters())...)
	ps = append(ps, prefixed("v_proj", a.VProj.NamedParameters())...)
	ps = append(ps, prefixed("o_proj", a.OProj.NamedParameters())...)
	if a.QNorm != nil {
		ps = append(ps, prefixed("q_norm", a.QNorm.NamedParameters())...)
		ps = append(ps, prefixed("k_norm", a.KNorm.NamedParameters())...)
	}
	return ps
}

// Parameters returns the parameters in the order of NamedParameters.
func (a *Attention) Parameters() []*tensor.Tensor { return params(a.NamedParameters()) }

// Train puts the layer's children in training mode (the dropout of
// LoRA adapters on its Linear layers; the layer itself has none).
func (a *Attention) Train() { eachChild(a.NamedChildren(), Module.Train) }

// Eval puts the layer's children in evaluation mode.
func (a *Attention) Eval() { eachChild(a.NamedChildren(), Module.Eval) }

// String prints the module tree.
func (a *Attention) String() string {
	ch := []child{{"q_proj", a.QProj}, {"k_proj", a.KProj}, {"v_proj", a.VProj}, {"o_proj", a.OProj}}
	if a.QNorm != nil {
		ch = append(ch, child{"q_norm", a.QNorm}, child{"k_norm", a.KNorm})
	}
	return treeString("Attention", NumParams(a), ch)
}
