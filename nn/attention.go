package nn

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// CausalSelfAttention is nanoGPT's multi-head masked self-attention: one
// fused projection c_attn to queries, keys and values, scaled dot-product
// attention in which each position sees only itself and earlier positions,
// and an output projection c_proj.
type CausalSelfAttention struct {
	CAttn       *Linear // [3·NEmbd, NEmbd]
	CProj       *Linear // [NEmbd, NEmbd]
	AttnDropout *Dropout
	ResidDrop   *Dropout
	NHead       int
	NEmbd       int
}

var _ Module = (*CausalSelfAttention)(nil)

// NewCausalSelfAttention returns the attention layer of cfg (Linear
// layers initialised like PyTorch's; NewGPT re-initialises them like
// nanoGPT). It panics if cfg.NEmbd is not a multiple of cfg.NHead.
func NewCausalSelfAttention(cfg GPTConfig) *CausalSelfAttention {
	return newCausalSelfAttention(cfg, nil)
}

// newCausalSelfAttention is NewCausalSelfAttention with the Linear layers
// initialised from gen.
func newCausalSelfAttention(cfg GPTConfig, gen *tensor.Generator) *CausalSelfAttention {
	if cfg.NHead <= 0 || cfg.NEmbd%cfg.NHead != 0 {
		panic(&tensor.Error{Pkg: "nn", Op: "NewCausalSelfAttention", Msg: fmt.Sprintf("n_embd %d is not a multiple of n_head %d", cfg.NEmbd, cfg.NHead)})
	}
	return &CausalSelfAttention{
		CAttn:       NewLinearWith(cfg.NEmbd, 3*cfg.NEmbd, cfg.Bias, gen),
		CProj:       NewLinearWith(cfg.NEmbd, cfg.NEmbd, cfg.Bias, gen),
		AttnDropout: NewDropout(cfg.Dropout),
		ResidDrop:   NewDropout(cfg.Dropout),
		NHead:       cfg.NHead,
		NEmbd:       cfg.NEmbd,
	}
}

// Forward applies attention to x [B, T, C] and returns [B, T, C]. It panics
// if x is not 3-D with C = NEmbd.
func (a *CausalSelfAttention) Forward(x *tensor.Tensor) *tensor.Tensor {
	if x.Dim() != 3 || x.Size(2) != a.NEmbd {
		panic(&tensor.Error{Pkg: "nn", Op: "CausalSelfAttention", Msg: fmt.Sprintf("expected input [B, T, %d], got %v", a.NEmbd, x.Shape())})
	}
	// the intermediates are private (tensor.Scope)
	return tensor.Scope(func() *tensor.Tensor { return a.forward(x) })
}

func (a *CausalSelfAttention) forward(x *tensor.Tensor) *tensor.Tensor {
	b, t, c := x.Size(0), x.Size(1), x.Size(2)
	hs := c / a.NHead
	if !a.AttnDropout.Training || a.AttnDropout.P == 0 {
		// one fused operation on the packed projection (no copies of
		// the heads, no masked scores materialised twice)
		y := tensor.AttentionQKV(a.CAttn.Forward(x), a.NHead, true)
		return a.ResidDrop.Forward(a.CProj.Forward(y))
	}
	qkv := a.CAttn.Forward(x).Split(c, 2)
	heads := func(z *tensor.Tensor) *tensor.Tensor { // (B, nh, T, hs)
		return z.Reshape(b, t, a.NHead, hs).Transpose(1, 2)
	}
	q, k, v := heads(qkv[0]), heads(qkv[1]), heads(qkv[2])
	// the composed form, so that dropout can act on the weights
	y := causalAttention(q, k, v, 0, a.AttnDropout).Transpose(1, 2).Reshape(b, t, c)
	return a.ResidDrop.Forward(a.CProj.Forward(y))
}

// NamedParameters returns c_attn's and c_proj's parameters.
func (a *CausalSelfAttention) NamedParameters() []NamedParam {
	return append(prefixed("c_attn", a.CAttn.NamedParameters()), prefixed("c_proj", a.CProj.NamedParameters())...)
}

// Parameters returns c_attn's and c_proj's parameters.
func (a *CausalSelfAttention) Parameters() []*tensor.Tensor { return params(a.NamedParameters()) }

// Train turns dropout on (LoRA adapters' too).
func (a *CausalSelfAttention) Train() {
	a.CAttn.Train()
	a.CProj.Train()
	a.AttnDropout.Train()
	a.ResidDrop.Train()
}

// Eval turns dropout off.
func (a *CausalSelfAttention) Eval() {
	a.CAttn.Eval()
	a.CProj.Eval()
	a.AttnDropout.Eval()
	a.ResidDrop.Eval()
}

// String prints the module tree.
func (a *CausalSelfAttention) String() string {
	return treeString("CausalSelfAttention", NumParams(a), []child{
		{"c_attn", a.CAttn}, {"c_proj", a.CProj}, {"attn_dropout", a.AttnDropout}, {"resid_dropout", a.ResidDrop},
	})
}

// MLP is nanoGPT's feed-forward layer: c_fc to 4·NEmbd, GELU (exact, or
// GPT-2's tanh approximation as GPTConfig.Activation says), c_proj back to
// NEmbd, dropout.
type MLP struct {
	CFc   *Linear
	Gelu  GELU
	CProj *Linear
	Drop  *Dropout
}

var _ Module = (*MLP)(nil)

// NewMLP returns the feed-forward layer of cfg.
func NewMLP(cfg GPTConfig) *MLP { return newMLP(cfg, nil) }

// newMLP is NewMLP with the Linear layers initialised from gen.
func newMLP(cfg GPTConfig, gen *tensor.Generator) *MLP {
	return &MLP{
		CFc:   NewLinearWith(cfg.NEmbd, 4*cfg.NEmbd, cfg.Bias, gen),
		Gelu:  cfg.Activation.gelu(),
		CProj: NewLinearWith(4*cfg.NEmbd, cfg.NEmbd, cfg.Bias, gen),
		Drop:  NewDropout(cfg.Dropout),
	}
}

// Forward applies the layer to x [..., NEmbd]. It panics if x's last
// dimension is not NEmbd.
func (m *MLP) Forward(x *tensor.Tensor) *tensor.Tensor {
	return tensor.Scope(func() *tensor.Tensor {
		return m.Drop.Forward(m.CProj.Forward(m.Gelu.Forward(m.CFc.Forward(x))))
	})
}

// NamedParameters returns c_fc's and c_proj's parameters.
func (m *MLP) NamedParameters() []NamedParam {
	return append(prefixed("c_fc", m.CFc.NamedParameters()), prefixed("c_proj", m.CProj.NamedParameters())...)
}

// Parameters returns c_fc's and c_proj's parameters.
func (m *MLP) Parameters() []*tensor.Tensor { return params(m.NamedParameters()) }

// Train turns dropout on.
func (m *MLP) Train() {
	m.CFc.Train()
	m.CProj.Train()
	m.Drop.Train()
}

// Eval turns dropout off.
func (m *MLP) Eval() {
	m.CFc.Eval()
	m.CProj.Eval()
	m.Drop.Eval()
}

// String prints the module tree.
func (m *MLP) String() string {
	return treeString("MLP", NumParams(m), []child{{"c_fc", m.CFc}, {"gelu", m.Gelu}, {"c_proj", m.CProj}, {"dropout", m.Drop}})
}

// Block is nanoGPT's pre-LayerNorm transformer block:
// x + attn(ln_1(x)), then + mlp(ln_2(x)).
type Block struct {
	Ln1  *LayerNorm
	Attn *CausalSelfAttention
	Ln2  *LayerNorm
	MLP  *MLP
}

var _ Module = (*Block)(nil)

// NewBlock returns a transformer block of cfg.
func NewBlock(cfg GPTConfig) *Block { return newBlock(cfg, nil) }

// newBlock is NewBlock with the Linear layers initialised from gen.
func newBlock(cfg GPTConfig, gen *tensor.Generator) *Block {
	return &Block{
		Ln1:  NewLayerNorm(cfg.NEmbd, cfg.Bias),
		Attn: newCausalSelfAttention(cfg, gen),
		Ln2:  NewLayerNorm(cfg.NEmbd, cfg.Bias),
		MLP:  newMLP(cfg, gen),
	}
}

// Forward applies the block to x [B, T, C]. It panics if x is not 3-D with
// C = NEmbd.
func (bl *Block) Forward(x *tensor.Tensor) *tensor.Tensor {
	return tensor.Scope(func() *tensor.Tensor {
		x := x.Add(bl.Attn.Forward(bl.Ln1.Forward(x)))
		return x.Add(bl.MLP.Forward(bl.Ln2.Forward(x)))
	})
}

// NamedParameters returns ln_1, attn, ln_2 and mlp parameters in that order.
func (bl *Block) NamedParameters() []NamedParam {
	var ps []NamedParam
	ps = append(ps, prefixed("ln_1", bl.Ln1.NamedParameters())...)
	ps = append(ps, prefixed("attn", bl.Attn.NamedParameters())...)
	ps = append(ps, prefixed("ln_2", bl.Ln2.NamedParameters())...)
	return append(ps, prefixed("mlp", bl.MLP.NamedParameters())...)
}

// Parameters returns the block's parameters in the order of NamedParameters.
func (bl *Block) Parameters() []*tensor.Tensor { return params(bl.NamedParameters()) }

// Train turns dropout on.
func (bl *Block) Train() { bl.Attn.Train(); bl.MLP.Train() }

// Eval turns dropout off.
func (bl *Block) Eval() { bl.Attn.Eval(); bl.MLP.Eval() }

// String prints the module tree.
func (bl *Block) String() string {
	return treeString("Block", NumParams(bl), []child{{"ln_1", bl.Ln1}, {"attn", bl.Attn}, {"ln_2", bl.Ln2}, {"mlp", bl.MLP}})
}
