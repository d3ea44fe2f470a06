package nn

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// LlamaConfig describes a model of the Llama family, with the fields of
// Hugging Face's LlamaConfig, Qwen2Config and Qwen3Config that shape it
// (see ReadLlamaConfig for how config.json maps onto it).
type LlamaConfig struct {
	ModelType             string // "llama", "mistral", "qwen2" or "qwen3"
	VocabSize             int
	HiddenSize            int
	IntermediateSize      int
	NumHiddenLayers       int
	NumAttentionHeads     int
	NumKeyValueHeads      int // divides NumAttentionHeads
	HeadDim               int // features per head; Hidden/heads in Llama, not always in Qwen3
	MaxPositionEmbeddings int
	RMSNormEps            float32
	RopeTheta             float64
	RopeScaling           RopeScaling
	QKVBias               bool // biases on q_proj, k_proj, v_proj (Qwen2; Llama's attention_bias)
	OBias                 bool // a bias on o_proj (Llama's attention_bias)
	MLPBias               bool // biases in the MLP (Llama's mlp_bias)
	QKNorm                bool // Qwen3's q_norm and k_norm
	TieWordEmbeddings     bool // lm_head.weight is embed_tokens.weight
	EOSTokenIDs           []int
}

// LlamaModelTypes are the model_type values of LlamaConfig.
var llamaModelTypes = []string{"llama", "mistral", "qwen2", "qwen3"}

// Validate reports what is wrong with c, or nil.
func (c LlamaConfig) Validate() error {
	var errs []error
	if !slices.Contains(llamaModelTypes, c.ModelType) {
		errs = append(errs, fmt.Errorf("model_type %q is not one of %s", c.ModelType, strings.Join(llamaModelTypes, ", ")))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"vocab_size", c.VocabSize}, {"hidden_size", c.HiddenSize}, {"intermediate_size", c.IntermediateSize},
		{"num_hidden_layers", c.NumHiddenLayers}, {"max_position_embeddings", c.MaxPositionEmbeddings}} {
		if f.v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", f.name, f.v))
		}
	}
	if err := c.attention().Validate(); err != nil {
		errs = append(errs, err)
	}
	if !(c.RMSNormEps >= 0) {
		errs = append(errs, fmt.Errorf("rms_norm_eps must be non-negative, got %v", c.RMSNormEps))
	}
	if !(c.RopeTheta > 0) {
		errs = append(errs, fmt.Errorf("rope_theta must be positive, got %v", c.RopeTheta))
	}
	if err := c.RopeScaling.Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, id := range c.EOSTokenIDs {
		if id < 0 || id >= c.VocabSize {
			errs = append(errs, fmt.Errorf("eos_token_id %d is outside the vocabulary [0, %d)", id, c.VocabSize))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("nn: invalid LlamaConfig: %w", err)
	}
	return nil
}

// attention returns the configuration of c's attention layers.
func (c LlamaConfig) attention() AttentionConfig {
	return AttentionConfig{
		Hidden: c.HiddenSize, NHeads: c.NumAttentionHeads, NKVHeads: c.NumKeyValueHeads, HeadDim: c.HeadDim,
		QKVBias: c.QKVBias, OBias: c.OBias, QKNorm: c.QKNorm, NormEps: c.RMSNormEps,
	}
}

// LlamaDecoderLayer is one block of the Llama family:
// x + self_attn(input_layernorm(x)), then + mlp(post_attention_layernorm(x)).
type LlamaDecoderLayer struct {
	SelfAttn               *Attention
	MLP                    *GatedMLP
	InputLayernorm         *RMSNorm
	PostAttentionLayernorm *RMSNorm
}

var _ Module = (*LlamaDecoderLayer)(nil)

func (l *LlamaDecoderLayer) forward(x, cos, sin, k, v *tensor.Tensor, pos int) *tensor.Tensor {
	var a *tensor.Tensor
	if k == nil {
		a = l.SelfAttn.Forward(l.InputLayernorm.Forward(x), cos, sin)
	} else {
		a = l.SelfAttn.ForwardCached(l.InputLayernorm.Forward(x), cos, sin, k, v, pos)
	}
	x = x.Add(a)
	return x.Add(l.MLP.Forward(l.PostAttentionLayernorm.Forward(x)))
}

// NamedParameters returns self_attn's, mlp's, input_layernorm's and
// post_attention_layernorm's parameters, Hugging Face's order.
func (l *LlamaDecoderLayer) NamedParameters() []NamedParam {
	ps := prefixed("self_attn", l.SelfAttn.NamedParameters())
	ps = append(ps, prefixed("mlp", l.MLP.NamedParameters())...)
	ps = append(ps, prefixed("input_layernorm", l.InputLayernorm.NamedParameters())...)
	return append(ps, prefixed("post_attention_layernorm", l.PostAttentionLayernorm.NamedParameters())...)
}

// Parameters returns the parameters in the order of NamedParameters.
func (l *LlamaDecoderLayer) Parameters() []*tensor.Tensor { return params(l.NamedParameters()) }

// Train puts the layer's children in training mode (the dropout of
// LoRA adapters on its Linear layers; the layer itself has none).
func (l *LlamaDecoderLayer) Train() { eachChild(l.NamedChildren(), Module.Train) }

// Eval puts the layer's children in evaluation mode.
func (l *LlamaDecoderLayer) Eval() { eachChild(l.NamedChildren(), Module.Eval) }

// String prints the module tree.
func (l *LlamaDecoderLayer) String() string {
	return treeString("LlamaDecoderLayer", NumParams(l), []child{{"self_attn", l.SelfAttn}, {"mlp", l.MLP},
		{"input_layernorm", l.InputLayernorm}, {"post_attention_layernorm", l.PostAttentionLayernorm}})
}

// Llama is a decoder-only model of the Llama family (Hugging Face's
// LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, and
// MistralForCausalLM without a sliding window): token embeddings,
// NumHiddenLayers decoder layers with rotary position embeddings, a final
// RMSNorm and a language-model head, tied to the embeddings or not.
// Parameter names, shapes and order are Hugging Face's
// (model.embed_tokens.weight, model.layers.N.self_attn.q_proj.weight, …,
// model.norm.weight, lm_head.weight), so weights move both ways with
// SaveFile, LoadFile and the hub's files.
type Llama struct {
	Config       LlamaConfig
	EmbedTokens  *Embedding // model.embed_tokens
	Layers       []*LlamaDecoderLayer
	Norm         *RMSNorm // model.norm
	LMHead       *Linear  // lm_head; its Weight is EmbedTokens.Weight when tied
	RotaryEmbeds *Rotary

	// ActivationCheckpointing recomputes each decoder layer's activations
	// in the backward pass instead of keeping them (see recompute.go):
	// the gradients are bit for bit the same, the dropout of LoRA adapters
	// included. Generation with a key/value cache is unaffected.
	ActivationCheckpointing bool
}

// NewLlama returns a Llama of cfg initialised like Hugging Face's
// _init_weights: Linear and Embedding weights normal with std 0.02, biases
// zero, RMSNorm weights one, from the global generator. It panics if cfg
// is invalid (see Validate).
func NewLlama(cfg LlamaConfig) *Llama { return NewLlamaWith(cfg, nil) }

// NewLlamaWith is NewLlama with the weights drawn from gen (the global
// generator if gen is nil).
func NewLlamaWith(cfg LlamaConfig, gen *tensor.Generator) *Llama {
	m := newLlamaZeros(cfg, tensor.Float32)
	autograd.NoGrad(func() {
		for _, p := range m.NamedParameters() {
			switch {
			case strings.HasSuffix(p.Name, "norm.weight"):
			case strings.HasSuffix(p.Name, ".bias"):
			default:
				p.Param.NormalInitWith(0, 0.02, gen)
			}
		}
	})
	return m
}

// newLlamaZeros returns a Llama of cfg with zero Linear and Embedding
// weights and RMSNorm weights one, for a loader to fill, its parameters of
// dt (zerosOf).
func newLlamaZeros(cfg LlamaConfig, dt tensor.DType) *Llama {
	if err := cfg.Validate(); err != nil {
		panic(&tensor.Error{Pkg: "nn", Op: "NewLlama", Msg: strings.TrimPrefix(err.Error(), "nn: ")})
	}
	if err := cfg.checkSize(); err != nil {
		panic(&tensor.Error{Pkg: "nn", Op: "NewLlama", Msg: err.Error()})
	}
	z := func(shape ...int) *tensor.Tensor { return zerosOf(dt, shape...) }
	linear := func(in, out int, bias bool) *Linear {
		l := &Linear{Weight: z(out, in), In: in, Out: out}
		if bias {
			l.Bias = z(out)
		}
		return l
	}
	h, ac := cfg.HiddenSize, cfg.attention()
	m := &Llama{
		Config:       cfg,
		EmbedTokens:  &Embedding{Weight: z(cfg.VocabSize, h), Num: cfg.VocabSize, Dim: h},
		Norm:         NewRMSNorm(h, cfg.RMSNormEps),
		RotaryEmbeds: NewRotary(cfg.HeadDim, cfg.RopeTheta, cfg.RopeScaling),
	}
	for range cfg.NumHiddenLayers {
		a := &Attention{
			QProj:  linear(h, ac.NHeads*ac.HeadDim, ac.QKVBias),
			KProj:  linear(h, ac.NKVHeads*ac.HeadDim, ac.QKVBias),
			VProj:  linear(h, ac.NKVHeads*ac.HeadDim, ac.QKVBias),
			OProj:  linear(ac.NHeads*ac.HeadDim, h, ac.OBias),
			Config: ac,
		}
		if ac.QKNorm {
			a.QNorm, a.KNorm = NewRMSNorm(ac.HeadDim, ac.NormEps), NewRMSNorm(ac.HeadDim, ac.NormEps)
		}
		m.Layers = append(m.Layers, &LlamaDecoderLayer{
			SelfAttn: a,
			MLP: &GatedMLP{
				GateProj: linear(h, cfg.IntermediateSize, cfg.MLPBias),
				UpProj:   linear(h, cfg.IntermediateSize, cfg.MLPBias),
				DownProj: linear(cfg.IntermediateSize, h, cfg.MLPBias),
			},
			InputLayernorm:         NewRMSNorm(h, cfg.RMSNormEps),
			PostAttentionLayernorm: NewRMSNorm(h, cfg.RMSNormEps),
		})
	}
	if cfg.TieWordEmbeddings {
		m.LMHead = &Linear{Weight: m.EmbedTokens.Weight, In: h, Out: cfg.VocabSize}
	} else {
		m.LMHead = linear(h, cfg.VocabSize, false)
	}
	toDTypeSmall(m, dt)
	adviseHugePages(m)
	return m
}

// checkTokens panics unless idx is an Int64 [B, T] tensor with T ≥ 1.
func checkTokens(op string, idx *tensor.Tensor) {
	if idx.Dim() != 2 || idx.DType() != tensor.Int64 || idx.Size(1) == 0 {
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("expected int64 token indices [B, T] with T ≥ 1, got %s tensor of shape %v", idx.DType(), idx.Shape())})
	}
}

// hidden runs idx [B, T] at positions pos … pos+T−1 through the layers
// (with cache, appending to it) and returns the final-norm output.
func (m *Llama) hidden(idx *tensor.Tensor, cache *KVCache) *tensor.Tensor {
	pos := 0
	if cache != nil {
		pos = cache.Len
	}
	cos, sin := m.RotaryEmbeds.CosSin(pos, idx.Size(1), idx.Device())
	x := activation(m.EmbedTokens.Forward(idx))
	for i, l := range m.Layers {
		switch {
		case cache != nil:
			x = l.forward(x, cos, sin, cache.K[i], cache.V[i], pos)
		case m.ActivationCheckpointing:
			x = l.checkpointed(x, cos, sin)
		default:
			x = l.forward(x, cos, sin, nil, nil, 0)
		}
	}
	return m.Norm.Forward(x)
}

// Forward returns the logits [B, T, VocabSize] of the Int64 tokens idx
// [B, T] at positions 0 … T−1. It panics if idx is not an Int64 tensor
// [B, T] with T ≥ 1, or holds a token outside [0, VocabSize).
func (m *Llama) Forward(idx *tensor.Tensor) *tensor.Tensor {
	checkTokens("Llama.Forward", idx)
	return tensor.Scope(func() *tensor.Tensor { return m.LMHead.Forward(m.hidden(idx, nil)) })
}

// ForwardLoss returns the logits and the mean cross-entropy against
// targets [B, T] (positions with target -1 are ignored).
func (m *Llama) ForwardLoss(idx, targets *tensor.Tensor) (logits, loss *tensor.Tensor) {
	logits = m.Forward(idx)
	loss = tensor.CrossEntropyIgnore(logits.Reshape(-1, logits.Size(-1)), targets.Reshape(-1), -1)
	return logits, loss
}

// Loss returns the mean cross-entropy of the logits of idx [B, T] against
// targets [B, T], ignoring targets equal to -1. With a plain float32 head
// (no bias, no unmerged LoRA adapter on lm_head) the head and the loss are
// one tensor.LinearCrossEntropy, which never holds the logits [B·T,
// VocabSize] whole: a training step keeps none of them for backward.
func (m *Llama) Loss(idx, targets *tensor.Tensor) *tensor.Tensor {
	head := m.LMHead
	if head.Bias != nil || head.lora != nil && !head.lora.merged || head.Weight.DType() != tensor.Float32 {
		_, loss := m.ForwardLoss(idx, targets)
		return loss
	}
	checkTokens("Llama.Loss", idx)
	h := tensor.Scope(func() *tensor.Tensor { return m.hidden(idx, nil) })
	if h.DType() != tensor.Float32 {
		logits := head.Forward(h)
		return tensor.CrossEntropyIgnore(logits.Reshape(-1, logits.Size(-1)), targets.Reshape(-1), -1)
	}
	if idx.Dim() != 2 || !slices.Equal(targets.Shape(), idx.Shape()) {
		panic(&tensor.Error{Pkg: "nn", Op: "Llama.Loss", Msg: fmt.Sprintf("targets of shape %v do not match the tokens' %v", targets.Shape(), idx.Shape())})
	}
	return tensor.LinearCrossEntropy(h.Reshape(-1, h.Size(-1)), head.Weight, targets.Reshape(-1), -1)
}

// ModelType returns Config.ModelType.
func (m *Llama) ModelType() string { return m.Config.ModelType }

// VocabSize returns Config.VocabSize.
func (m *Llama) VocabSize() int { return m.Config.VocabSize }

// ContextSize returns Config.MaxPositionEmbeddings.
func (m *Llama) ContextSize() int { return m.Config.MaxPositionEmbeddings }

// EOSTokenIDs returns Config.EOSTokenIDs.
func (m *Llama) EOSTokenIDs() []int { return slices.Clone(m.Config.EOSTokenIDs) }

// NewKVCache returns an empty cache of per-layer keys and values
// [batch, NumKeyValueHeads, capacity, HeadDim].
func (m *Llama) NewKVCache(batch, capacity int) *KVCache {
	c := &KVCache{Capacity: capacity}
	dev := m.EmbedTokens.Weight.Device()
	for range m.Layers {
		c.K = append(c.K, tensor.Zeros(batch, m.Config.NumKeyValueHeads, capacity, m.Config.HeadDim).To(dev))
		c.V = append(c.V, tensor.Zeros(batch, m.Config.NumKeyValueHeads, capacity, m.Config.HeadDim).To(dev))
	}
	return c
}

// ForwardCached implements CausalLM. One token of one sequence (idx
// [1, 1]) of a float32 or bfloat16 model on the CPU, outside a recorded
// pass and an autocast region, takes a fused step (llama_fused.go) with
// the eager ops' bits. It panics if idx is not Int64 [B, T] or the cache
// cannot take T more positions.
func (m *Llama) ForwardCached(idx *tensor.Tensor, cache *KVCache) *tensor.Tensor {
	checkTokens("Llama.ForwardCached", idx)
	t := idx.Size(1)
	if tok, ok := fusedToken(idx, cache, m.Config.VocabSize); ok {
		s := llamaScratchPool.Get().(*llamaScratch)
		defer llamaScratchPool.Put(s)
		if f, ok := m.fusedDecode(cache, s); ok {
			logits := m.decodeFused(f, s, tok, cache.Len)
			cache.Len++
			return logits
		}
	}
	h := m.hidden(idx, cache)
	cache.Len += t
	return m.LMHead.Forward(h.Slice(1, t-1, t)).Reshape(idx.Size(0), -1)
}

// NamedParameters returns the parameters with Hugging Face's names in the
// order of its named_parameters: model.embed_tokens.weight,
// model.layers.0.self_attn.q_proj.weight, …, model.norm.weight, then
// lm_head.weight unless it is tied to the embeddings.
func (m *Llama) NamedParameters() []NamedParam {
	ps := prefixed("model.embed_tokens", m.EmbedTokens.NamedParameters())
	for i, l := range m.Layers {
		ps = append(ps, prefixed(fmt.Sprintf("model.layers.%d", i), l.NamedParameters())...)
	}
	ps = append(ps, prefixed("model.norm", m.Norm.NamedParameters())...)
	if !m.Config.TieWordEmbeddings {
		ps = append(ps, prefixed("lm_head", m.LMHead.NamedParameters())...)
	}
	return ps
}

// Parameters returns the parameters in the order of NamedParameters.
func (m *Llama) Parameters() []*tensor.Tensor { return params(m.NamedParameters()) }

// Train puts the model's layers in training mode (the dropout of LoRA
// adapters; the family itself has none).
func (m *Llama) Train() { eachChild(m.NamedChildren(), Module.Train) }

// Eval puts the model's layers in evaluation mode.
func (m *Llama) Eval() { eachChild(m.NamedChildren(), Module.Eval) }

// tiedParameters implements tiedModule when the head is tied.
func (m *Llama) tiedParameters() []NamedParam {
	if !m.Config.TieWordEmbeddings {
		return nil
	}
	return []NamedParam{{"lm_head.weight", m.LMHead.Weight}}
}

var rotaryBuffer = regexp.MustCompile(`^model\.layers\.[0-9]+\.self_attn\.rotary_emb\.inv_freq$`)

// ignoredKey implements ignoringModule: older checkpoints store each
// layer's rotary inverse frequencies, which carry no weights.
func (m *Llama) ignoredKey(name string) bool { return rotaryBuffer.MatchString(name) }

// String prints the module tree like PyTorch's repr, with parameter counts.
func (m *Llama) String() string {
	layers := make([]child, len(m.Layers))
	n := 0
	for i, l := range m.Layers {
		layers[i] = child{fmt.Sprint(i), l}
		n += NumParams(l)
	}
	model := stringFunc(func() string {
		return treeString("LlamaModel", NumParams(m)-map[bool]int{true: 0, false: NumParams(m.LMHead)}[m.Config.TieWordEmbeddings], []child{
			{"embed_tokens", m.EmbedTokens},
			{"layers", stringFunc(func() string { return treeString("ModuleList", n, layers) })},
			{"norm", m.Norm},
		})
	})
	head := stringFunc(func() string {
		s := fmt.Sprintf("Linear(in_features=%d, out_features=%d, bias=False)", m.LMHead.In, m.LMHead.Out)
		if m.Config.TieWordEmbeddings {
			s += "  # tied to model.embed_tokens.weight"
		}
		return s
	})
	return treeString("LlamaForCausalLM", NumParams(m), []child{{"model", model}, {"lm_head", head}})
}
