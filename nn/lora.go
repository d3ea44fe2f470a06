package nn

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// LoRAConfig describes low-rank adapters (LoRA, Hu et al. 2021) with the
// fields of PEFT's LoraConfig.
type LoRAConfig struct {
	R       int     // rank of the adapters (PEFT: r)
	Alpha   float64 // scaling numerator: the update is (Alpha/R)·B·A (lora_alpha)
	Dropout float32 // dropout on the adapters' input while training (lora_dropout)

	// TargetModules lists module names as PEFT's target_modules list
	// does: a Linear layer whose dotted name equals an entry, or ends in
	// "." + an entry, gets an adapter ("c_attn", "q_proj", or a full name
	// such as "transformer.h.0.attn.c_attn").
	TargetModules []string
	// TargetRegexp, when not empty, is used instead of TargetModules, as
	// PEFT uses a target_modules string: a regular expression that must
	// match the whole dotted name.
	TargetRegexp string

	// BaseModel is written as base_model_name_or_path in
	// adapter_config.json (informational).
	BaseModel string

	// Gen is the source of the adapters' initial A matrices and of their
	// dropout masks; nil means the global generator.
	Gen *tensor.Generator
}

// matches reports whether the module named name is a target, exactly as
// PEFT's check_target_module_exists decides it.
func (c LoRAConfig) matches(re *regexp.Regexp, name string) bool {
	if re != nil {
		return re.MatchString(name)
	}
	for _, t := range c.TargetModules {
		if name == t || strings.HasSuffix(name, "."+t) {
			return true
		}
	}
	return false
}

// Scaling returns Alpha/R, the factor PEFT applies to B·A.
func (c LoRAConfig) Scaling() float64 { return c.Alpha / float64(c.R) }

func (c LoRAConfig) validate() (*regexp.Regexp, error) {
	var errs []error
	if c.R <= 0 {
		errs = append(errs, fmt.Errorf("r must be positive, got %d", c.R))
	}
	if !(c.Dropout >= 0 && c.Dropout < 1) {
		errs = append(errs, fmt.Errorf("lora_dropout must be in [0, 1), got %v", c.Dropout))
	}
	if math.IsNaN(c.Alpha) || math.IsInf(c.Alpha, 0) {
		errs = append(errs, fmt.Errorf("lora_alpha must be finite, got %v", c.Alpha))
	}
	var re *regexp.Regexp
	switch {
	case c.TargetRegexp != "":
		var err error
		if re, err = regexp.Compile(`^(?:` + c.TargetRegexp + `)$`); err != nil {
			errs = append(errs, fmt.Errorf("target_modules %q is not a regular expression: %w", c.TargetRegexp, err))
		}
	case len(c.TargetModules) == 0:
		errs = append(errs, errors.New("no target modules given"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("nn: LoRA: %w", err)
	}
	return re, nil
}

// loraAdapter is the adapter of one Linear layer: y += s·B(A(dropout(x))).
type loraAdapter struct {
	a, b    *tensor.Tensor // lora_A.weight [r, in], lora_B.weight [out, r]
	scaling float32
	drop    *Dropout
	merged  bool
	base    *tensor.Tensor // the unmerged weight while merged
}

// delta returns s·(dropout(x)·Aᵀ)·Bᵀ, PEFT's lora_B(lora_A(dropout(x))) * scaling.
func (a *loraAdapter) delta(x *tensor.Tensor) *tensor.Tensor {
	return a.drop.Forward(x).MatMul(a.a.T()).MatMul(a.b.T()).MulScalar(a.scaling)
}

// deltaWeight returns s·B·A [out, in] without recording.
func (a *loraAdapter) deltaWeight() *tensor.Tensor {
	var d *tensor.Tensor
	autograd.NoGrad(func() { d = a.b.Detach().MatMul(a.a.Detach()).MulScalar(a.scaling) })
	return d
}

// LoRA is a set of low-rank adapters attached to a model's Linear layers
// by ApplyLoRA. The model's own Forward runs them: each adapted layer
// returns x·Wᵀ + b + (Alpha/R)·B·A·dropout(x), PEFT's LoRA Linear. The base
// weights are frozen (they no longer require gradients); give the
// optimizer Parameters. The model's NamedParameters and its saved files
// keep the base names and weights only; the adapters are saved apart with
// SaveAdapter, in PEFT's layout.
//
// Like Train and Eval, Merge, Unmerge and MergeAndUnload must not run
// while another goroutine uses the model.
type LoRA struct {
	Config  LoRAConfig
	names   []string // adapted modules, in the model's order
	layers  map[string]*Linear
	removed bool
}

// NamedChildren is implemented by modules with child modules (PyTorch's
// named_children): Container (and every struct that embeds one),
// Sequential, ModuleList and the GPT modules. ApplyLoRA walks it to find
// Linear layers by their dotted names. A child name may itself be dotted
// ("transformer.h.0").
type NamedChildren interface {
	NamedChildren() []NamedModule
}

// NamedModules returns m's sub-modules with their dotted names, m itself
// first under "", depth first in the order of NamedChildren, like
// PyTorch's named_modules. A module reached twice is listed once.
func NamedModules(m Module) []NamedModule {
	var out []NamedModule
	seen := map[Module]bool{}
	var walk func(prefix string, m Module)
	walk = func(prefix string, m Module) {
		if m == nil {
			return
		}
		if reflect.ValueOf(m).Kind() == reflect.Pointer {
			if seen[m] {
				return
			}
			seen[m] = true
		}
		out = append(out, NamedModule{Name: prefix, Module: m})
		p, ok := m.(NamedChildren)
		if !ok {
			return
		}
		for _, c := range p.NamedChildren() {
			name := c.Name
			if prefix != "" {
				name = prefix + "." + c.Name
			}
			walk(name, c.Module)
		}
	}
	walk("", m)
	return out
}

// NamedChildren returns the children in order.
func (c Container) NamedChildren() []NamedModule { return c }

// NamedChildren returns the layers named by position.
func (s Sequential) NamedChildren() []NamedModule { return s.children() }

// NamedChildren returns the modules named by position.
func (l ModuleList) NamedChildren() []NamedModule { return l.children() }

// NamedChildren returns the embeddings, the blocks, the final LayerNorm and
// lm_head under nanoGPT's names.
func (g *GPT) NamedChildren() []NamedModule {
	out := []NamedModule{{"transformer.wte", g.Wte}, {"transformer.wpe", g.Wpe}, {"transformer.drop", g.Drop}}
	for i, b := range g.H {
		out = append(out, NamedModule{fmt.Sprintf("transformer.h.%d", i), b})
	}
	return append(out, NamedModule{"transformer.ln_f", g.LnF}, NamedModule{"lm_head", g.LmHead})
}

// NamedChildren returns ln_1, attn, ln_2 and mlp.
func (bl *Block) NamedChildren() []NamedModule {
	return []NamedModule{{"ln_1", bl.Ln1}, {"attn", bl.Attn}, {"ln_2", bl.Ln2}, {"mlp", bl.MLP}}
}

// NamedChildren returns c_attn, c_proj and the dropout layers.
func (a *CausalSelfAttention) NamedChildren() []NamedModule {
	return []NamedModule{{"c_attn", a.CAttn}, {"c_proj", a.CProj}, {"attn_dropout", a.AttnDropout}, {"resid_dropout", a.ResidDrop}}
}

// NamedChildren returns c_fc, gelu, c_proj and dropout.
func (m *MLP) NamedChildren() []NamedModule {
	return []NamedModule{{"c_fc", m.CFc}, {"gelu", m.Gelu}, {"c_proj", m.CProj}, {"dropout", m.Drop}}
}

// ApplyLoRA attaches an adapter to every Linear layer of m whose dotted
// name matches cfg's targets (see LoRAConfig.TargetModules), initialised as
// PEFT initialises them: A kaiming-uniform with a=√5 (uniform in
// ±1/√in_features), B zeros, so the model's outputs are unchanged until
// training moves B. Every parameter of m stops requiring a gradient (PEFT
// freezes the whole base model); the adapters' parameters require one.
// The adapters start in training mode (dropout on); Train and Eval on the
// LoRA switch them, and so do Train and Eval of each Linear layer (which
// GPT's Train and Eval call; a model whose Train skips its Linear layers
// leaves the adapters as they are).
//
// ApplyLoRA returns an error, and leaves m unchanged, if cfg is invalid,
// if no module matches, if a matching module is not a Linear layer, or if
// a layer already has an adapter.
func ApplyLoRA(m Module, cfg LoRAConfig) (*LoRA, error) {
	re, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	l := &LoRA{Config: cfg, layers: map[string]*Linear{}}
	for _, nm := range NamedModules(m) {
		if nm.Name == "" || !cfg.matches(re, nm.Name) {
			continue
		}
		lin, ok := nm.Module.(*Linear)
		if !ok {
			return nil, fmt.Errorf("nn: LoRA: target module %q is a %T; only Linear layers take adapters", nm.Name, nm.Module)
		}
		if lin.lora != nil {
			return nil, fmt.Errorf("nn: LoRA: module %q already has an adapter", nm.Name)
		}
		l.names = append(l.names, nm.Name)
		l.layers[nm.Name] = lin
	}
	if len(l.names) == 0 {
		return nil, fmt.Errorf("nn: LoRA: target modules %s match no module of the model (Linear layers: %s)", cfg.targetString(), strings.Join(linearNames(m), ", "))
	}
	for _, p := range m.Parameters() {
		if p.IsLeaf() {
			p.SetRequiresGrad(false)
		}
	}
	for _, name := range l.names {
		lin := l.layers[name]
		// kaiming_uniform_(a=√5) on [r, in]: gain √(2/(1+5)), bound gain·√(3/in) = 1/√in
		b := 1 / math.Sqrt(float64(lin.In))
		// drawn on the CPU, then moved: leaves on the weight's device
		// (moved after RequiresGrad they would be copies whose
		// gradients flow to the CPU tensors)
		a := tensor.Zeros(cfg.R, lin.In).UniformInitWith(-b, b, cfg.Gen)
		bm := tensor.Zeros(lin.Out, cfg.R)
		if d := lin.Weight.Device(); d != tensor.CPU {
			a, bm = a.To(d), bm.To(d)
		}
		a, bm = a.RequiresGrad(), bm.RequiresGrad()
		drop := NewDropout(cfg.Dropout)
		drop.Gen = cfg.Gen
		lin.lora = &loraAdapter{a: a, b: bm, scaling: float32(cfg.Scaling()), drop: drop}
	}
	return l, nil
}

func (c LoRAConfig) targetString() string {
	if c.TargetRegexp != "" {
		return fmt.Sprintf("%q (a regular expression)", c.TargetRegexp)
	}
	return fmt.Sprintf("%q", c.TargetModules)
}

// linearNames lists the dotted names of m's Linear layers.
func linearNames(m Module) []string {
	var out []string
	for _, nm := range NamedModules(m) {
		if _, ok := nm.Module.(*Linear); ok && nm.Name != "" {
			out = append(out, nm.Name)
		}
	}
	if len(out) == 0 {
		return []string{"none reachable"}
	}
	return out
}

// Modules returns the dotted names of the adapted layers, in the model's
// order.
func (l *LoRA) Modules() []string { return append([]string(nil), l.names...) }

// NamedParameters returns the adapters' parameters under PEFT's saved
// names without the "base_model.model." prefix: NAME.lora_A.weight [r, in]
// and NAME.lora_B.weight [out, r], for each adapted layer in order.
func (l *LoRA) NamedParameters() []NamedParam {
	var out []NamedParam
	if l.removed {
		return nil
	}
	for _, n := range l.names {
		a := l.layers[n].lora
		out = append(out, NamedParam{n + ".lora_A.weight", a.a}, NamedParam{n + ".lora_B.weight", a.b})
	}
	return out
}

// Parameters returns the adapters' tensors, the ones to train, in the
// order of NamedParameters.
func (l *LoRA) Parameters() []*tensor.Tensor { return params(l.NamedParameters()) }

// Train turns the adapters' dropout on.
func (l *LoRA) Train() { l.each(func(a *loraAdapter) { a.drop.Train() }) }

// Eval turns the adapters' dropout off.
func (l *LoRA) Eval() { l.each(func(a *loraAdapter) { a.drop.Eval() }) }

func (l *LoRA) each(f func(*loraAdapter)) {
	if l.removed {
		return
	}
	for _, n := range l.names {
		f(l.layers[n].lora)
	}
}

// Merged reports whether the adapters are merged into the base weights.
func (l *LoRA) Merged() bool {
	return !l.removed && len(l.names) > 0 && l.layers[l.names[0]].lora.merged
}

// Merge folds each adapter into its layer, W' = W + (Alpha/R)·B·A (PEFT's
// merge), so the model runs at the speed of the base model; the adapters
// are not applied while merged. A bfloat16 or float16 weight stays in its
// dtype: W + (Alpha/R)·B·A is summed in float32 and rounded once. The unmerged weight is kept (as PEFT's
// safe_merge keeps a copy) so that Unmerge restores it bit for bit; the
// merged weight is a new tensor that does not require a gradient. Merge
// panics with a *tensor.Error if the adapters are already merged or
// removed, or if a merged weight is not finite.
func (l *LoRA) Merge() {
	if l.removed || l.Merged() {
		panic(&tensor.Error{Pkg: "nn", Op: "LoRA.Merge", Msg: "the adapters are already merged or were removed by MergeAndUnload"})
	}
	merged := make([]*tensor.Tensor, len(l.names))
	for i, n := range l.names {
		lin := l.layers[n]
		var w *tensor.Tensor
		autograd.NoGrad(func() {
			// a bfloat16 or float16 base: summed in float32, rounded once
			// to the base's dtype (PEFT's merge on the cpu)
			base := lin.Weight.Detach()
			w = base.ToDType(tensor.Float32).Add(lin.lora.deltaWeight()).ToDType(base.DType())
		})
		for _, v := range w.Float32s() {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				panic(&tensor.Error{Pkg: "nn", Op: "LoRA.Merge", Msg: fmt.Sprintf("the merged weight of %q is not finite: the adapter is broken", n)})
			}
		}
		merged[i] = w
	}
	for i, n := range l.names {
		lin := l.layers[n]
		lin.lora.base, lin.Weight, lin.lora.merged = lin.Weight, merged[i], true
	}
}

// Unmerge undoes Merge: each layer gets back the very weight tensor it had
// before Merge (bit for bit, the same tensor), and the adapters apply
// again. It panics with a *tensor.Error if the adapters are not merged.
func (l *LoRA) Unmerge() {
	if !l.Merged() {
		panic(&tensor.Error{Pkg: "nn", Op: "LoRA.Unmerge", Msg: "the adapters are not merged"})
	}
	for _, n := range l.names {
		lin := l.layers[n]
		lin.Weight, lin.lora.base, lin.lora.merged = lin.lora.base, nil, false
	}
}

// MergeAndUnload merges the adapters into the base weights for good and
// removes them from the model (PEFT's merge_and_unload): the model is a
// plain model again, with W + (Alpha/R)·B·A as weights, ready for SaveFile.
// The LoRA is empty afterwards. It panics like Merge.
func (l *LoRA) MergeAndUnload() {
	if !l.Merged() {
		l.Merge()
	}
	for _, n := range l.names {
		l.layers[n].lora = nil
	}
	l.removed = true
}

var _ Module = (*LoRA)(nil)

// NamedChildren returns model.embed_tokens, model.layers.N, model.norm and
// lm_head (Hugging Face's names).
func (m *Llama) NamedChildren() []NamedModule {
	out := []NamedModule{{"model.embed_tokens", m.EmbedTokens}}
	for i, l := range m.Layers {
		out = append(out, NamedModule{fmt.Sprintf("model.layers.%d", i), l})
	}
	return append(out, NamedModule{"model.norm", m.Norm}, NamedModule{"lm_head", m.LMHead})
}

// NamedChildren returns self_attn, mlp, input_layernorm and
// post_attention_layernorm.
func (l *LlamaDecoderLayer) NamedChildren() []NamedModule {
	return []NamedModule{{"self_attn", l.SelfAttn}, {"mlp", l.MLP}, {"input_layernorm", l.InputLayernorm},
		{"post_attention_layernorm", l.PostAttentionLayernorm}}
}

// NamedChildren returns q_proj, k_proj, v_proj, o_proj and, with per-head
// q/k normalisation, q_norm and k_norm.
func (a *Attention) NamedChildren() []NamedModule {
	out := []NamedModule{{"q_proj", a.QProj}, {"k_proj", a.KProj}, {"v_proj", a.VProj}, {"o_proj", a.OProj}}
	if a.QNorm != nil {
		out = append(out, NamedModule{"q_norm", a.QNorm}, NamedModule{"k_norm", a.KNorm})
	}
	return out
}

// NamedChildren returns gate_proj, up_proj and down_proj.
func (m *GatedMLP) NamedChildren() []NamedModule {
	return []NamedModule{{"gate_proj", m.GateProj}, {"up_proj", m.UpProj}, {"down_proj", m.DownProj}}
}
