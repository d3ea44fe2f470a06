package nn

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// GPTConfig describes a GPT model, with nanoGPT's GPTConfig fields.
type GPTConfig struct {
	VocabSize int     // number of tokens (nanoGPT: vocab_size)
	BlockSize int     // longest context (block_size)
	NLayer    int     // transformer blocks (n_layer)
	NHead     int     // attention heads (n_head)
	NEmbd     int     // embedding width (n_embd), a multiple of NHead
	Dropout   float32 // dropout probability while training (dropout)
	Bias      bool    // biases in Linear and LayerNorm layers (bias)

	// Activation is the MLP's nonlinearity: ActGELU (the zero value,
	// nanoGPT's exact GELU) or ActGELUTanh (GPT-2's). It is left out of
	// the JSON encoding when zero, so configurations written before the
	// field existed read back unchanged.
	Activation Activation `json:",omitempty"`
}

// Activation names the nonlinearity of a GPT's MLP, spelled as Hugging
// Face's activation_function where one exists.
type Activation string

// The activations of GPTConfig.
const (
	// ActGELU is the exact GELU x·Φ(x) of nanoGPT's model
	// (torch.nn.GELU()). It is the zero value.
	ActGELU Activation = ""
	// ActGELUTanh is GELU's tanh approximation that GPT-2 was trained
	// with: Hugging Face's "gelu_new", torch.nn.GELU(approximate='tanh').
	ActGELUTanh Activation = "gelu_new"
)

// gelu returns the GELU layer of a.
func (a Activation) gelu() GELU {
	if a == ActGELUTanh {
		return GELU{Approximate: "tanh"}
	}
	return GELU{}
}

// Validate reports what is wrong with c, or nil.
func (c GPTConfig) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"vocab_size", c.VocabSize}, {"block_size", c.BlockSize}, {"n_layer", c.NLayer}, {"n_head", c.NHead}, {"n_embd", c.NEmbd}} {
		if f.v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", f.name, f.v))
		}
	}
	if c.NHead > 0 && c.NEmbd%c.NHead != 0 {
		errs = append(errs, fmt.Errorf("n_embd %d must be a multiple of n_head %d", c.NEmbd, c.NHead))
	}
	if c.Dropout < 0 || c.Dropout >= 1 || c.Dropout != c.Dropout {
		errs = append(errs, fmt.Errorf("dropout must be in [0, 1), got %v", c.Dropout))
	}
	if c.Activation != ActGELU && c.Activation != ActGELUTanh {
		errs = append(errs, fmt.Errorf("activation must be %q (exact GELU) or %q (its tanh approximation), got %q", ActGELU, ActGELUTanh, c.Activation))
	}
	if len(errs) > 0 {
		return fmt.Errorf("nn: invalid GPTConfig: %w", problemList(errs))
	}
	return nil
}

// NumParams returns the number of parameters of a GPT of c (lm_head's
// weight, tied to the token embedding, counted once), computed from the
// sizes alone, without building anything; math.MaxInt64 when the count
// does not fit in an int64. c's sizes must not be negative.
func (c GPTConfig) NumParams() int64 { return clampInt64(c.numParams()) }

// clampInt64 is n (a parameter count, exact below 2^53) as an int64,
// math.MaxInt64 where it does not fit.
func clampInt64(n float64) int64 {
	if n >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(n)
}

// overBudget reports whether the float32 parameters of a model of n
// parameters would exceed tensor.MaxAllocBytes, with their bytes and the
// limit, for the size checks of every model config.
func overBudget(n float64) (over bool, bytes float64, limit int64) {
	bytes, limit = 4*n, tensor.MaxAllocBytes()
	return bytes > float64(limit), bytes, limit
}

// numParams is NumParams in float64, exact below 2^53.
func (c GPTConfig) numParams() float64 {
	v, t, l, e := float64(c.VocabSize), float64(c.BlockSize), float64(c.NLayer), float64(c.NEmbd)
	perLayer := 12*e*e + 2*e // the four Linear weights and the two LayerNorm weights
	lnF := e
	if c.Bias {
		perLayer += 11 * e // Linear biases 3C+C+4C+C, LayerNorm biases 2C
		lnF += e
	}
	return v*e + t*e + l*perLayer + lnF
}

// checkSize returns an error when the float32 parameters of a GPT of c
// would exceed tensor.MaxAllocBytes (the machine's memory by default,
// train's --max_memory when given): the budget that the loaders and
// NewGPT check before they allocate the model. The message names c's
// sizes and the bytes.
func (c GPTConfig) checkSize() error {
	over, bytes, limit := overBudget(c.numParams())
	if !over {
		return nil
	}
	return fmt.Errorf("%w: a GPT of vocab_size %d, block_size %d, n_layer %d, n_head %d, n_embd %d has %.4g parameters, %s as float32, above the allocation limit of %s (tensor.MaxAllocBytes: the machine's memory unless set lower, as train's --max_memory does)",
		ErrTooLarge, c.VocabSize, c.BlockSize, c.NLayer, c.NHead, c.NEmbd, c.numParams(), formatBytes(bytes), formatBytes(float64(limit)))
}

// ErrTooLarge is wrapped by the errors of loaders about a model or a
// tensor that would need more memory than tensor.MaxAllocBytes allows.
var ErrTooLarge = errors.New("too large for the memory budget")

// formatBytes writes b with a binary unit: "4 TiB", "1.5 GiB".
func formatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := b, 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v >= 1024 {
		return strconv.FormatFloat(b, 'g', 4, 64) + " bytes"
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + units[u]
}

// GPT is nanoGPT's decoder-only transformer: token and position embeddings,
// NLayer pre-LayerNorm blocks, a final LayerNorm and a language-model head
// whose weight is the token embedding (weight tying). Parameter names,
// shapes and order are nanoGPT's, so weights move both ways through
// SaveFile and LoadFile.
type GPT struct {
	Config GPTConfig
	Wte    *Embedding // transformer.wte
	Wpe    *Embedding // transformer.wpe
	Drop   *Dropout   // transformer.drop
	H      []*Block   // transformer.h
	LnF    *LayerNorm // transformer.ln_f
	LmHead *Linear    // lm_head; its Weight is Wte.Weight

	// ActivationCheckpointing recomputes each block's activations in the
	// backward pass instead of keeping them (see Checkpointed): the
	// gradients are bit for bit the same, dropout included.
	ActivationCheckpointing bool
}

var _ Module = (*GPT)(nil)

// NewGPT returns a GPT initialised like nanoGPT: Linear and Embedding
// weights normal with std 0.02, the residual projections (c_proj.weight)
// with std 0.02/√(2·NLayer), biases zero, LayerNorm weights one. Random
// numbers come from the global generator (tensor.ManualSeed). The model
// starts in training mode. NewGPT panics if cfg is invalid (see Validate),
// or if the model's float32 parameters (cfg.NumParams()·4 bytes) would
// exceed tensor.MaxAllocBytes, before allocating anything.
func NewGPT(cfg GPTConfig) *GPT { return NewGPTWith(cfg, nil) }

// NewGPTWith is NewGPT with every random number of the model drawn from gen
// (the global generator if gen is nil): the initial weights, and later the
// dropout masks, since its Dropout layers get gen as their Gen (see
// SetDropoutGenerator). NewGPTWith(cfg, tensor.NewGenerator(s)) builds the
// same weights as tensor.ManualSeed(s) followed by NewGPT(cfg), without
// touching the global generator, so goroutines can build models at once
// and each get the weights it would get alone. NewGPTWith panics like
// NewGPT.
func NewGPTWith(cfg GPTConfig, gen *tensor.Generator) *GPT {
	if err := cfg.Validate(); err != nil {
		panic(&tensor.Error{Pkg: "nn", Op: "NewGPT", Msg: strings.TrimPrefix(err.Error(), "nn: ")})
	}
	if err := cfg.checkSize(); err != nil {
		panic(&tensor.Error{Pkg: "nn", Op: "NewGPT", Msg: err.Error()})
	}
	g := &GPT{
		Config: cfg,
		Wte:    NewEmbeddingWith(cfg.VocabSize, cfg.NEmbd, gen),
		Wpe:    NewEmbeddingWith(cfg.BlockSize, cfg.NEmbd, gen),
		Drop:   NewDropout(cfg.Dropout),
		LnF:    NewLayerNorm(cfg.NEmbd, cfg.Bias),
	}
	for range cfg.NLayer {
		g.H = append(g.H, newBlock(cfg, gen))
	}
	g.SetDropoutGenerator(gen)
	g.LmHead = &Linear{Weight: g.Wte.Weight, In: cfg.NEmbd, Out: cfg.VocabSize}
	// In-place initialisation of parameters that require grad: inside
	// NoGrad, like torch.nn.init's functions.
	projStd := 0.02 / math.Sqrt(2*float64(cfg.NLayer))
	autograd.NoGrad(func() {
		for _, p := range g.NamedParameters() {
			switch {
			case strings.HasSuffix(p.Name, "c_proj.weight"):
				p.Param.NormalInitWith(0, projStd, gen)
			case strings.Contains(p.Name, ".ln_") && strings.HasSuffix(p.Name, ".weight"):
				p.Param.Fill_(1)
			case strings.HasSuffix(p.Name, ".bias"):
				p.Param.Fill_(0)
			default: // Linear and Embedding weights
				p.Param.NormalInitWith(0, 0.02, gen)
			}
		}
	})
	adviseHugePages(g)
	return g
}

// SetDropoutGenerator makes every Dropout layer of the model draw its masks
// from gen (the global generator if gen is nil). Like Train and Eval, it
// must not run while another goroutine uses the model.
func (g *GPT) SetDropoutGenerator(gen *tensor.Generator) {
	g.Drop.Gen = gen
	for _, b := range g.H {
		b.Attn.AttnDropout.Gen = gen
		b.Attn.ResidDrop.Gen = gen
		b.MLP.Drop.Gen = gen
	}
}

// hidden returns the final-LayerNorm output [B, T, C] for idx [B, T].
func (g *GPT) hidden(idx *tensor.Tensor) *tensor.Tensor {
	if idx.Dim() != 2 || idx.DType() != tensor.Int64 {
		panic(&tensor.Error{Pkg: "nn", Op: "GPT.Forward", Msg: fmt.Sprintf("expected int64 token indices [B, T], got %s tensor of shape %v", idx.DType(), idx.Shape())})
	}
	t := idx.Size(1)
	if t == 0 {
		panic(&tensor.Error{Pkg: "nn", Op: "GPT.Forward", Msg: fmt.Sprintf("expected int64 token indices [B, T] with T ≥ 1, got an empty sequence, shape %v", idx.Shape())})
	}
	if t > g.Config.BlockSize {
		panic(&tensor.Error{Pkg: "nn", Op: "GPT.Forward", Msg: fmt.Sprintf("cannot forward sequence of length %d, block size is only %d", t, g.Config.BlockSize)})
	}
	// the activations are private to this pass: their memory is reused
	// once the backward pass has released them (tensor.Scope)
	return tensor.Scope(func() *tensor.Tensor {
		pos := tensor.ArangeInt(t).To(idx.Device())
		x := g.Drop.Forward(embedAdd(g.Wte, g.Wpe, idx, pos))
		for _, b := range g.H {
			if g.ActivationCheckpointing {
				x = Checkpointed{b}.Forward(x)
			} else {
				x = b.Forward(x)
			}
		}
		return g.LnF.Forward(x)
	})
}

// Forward returns the logits [B, T, VocabSize] for the Int64 tokens idx
// [B, T] (T ≤ BlockSize). Unlike nanoGPT's forward without targets, it
// returns the logits of every position. Forward panics if idx is not an
// Int64 tensor [B, T] with 1 ≤ T ≤ BlockSize, or holds a token outside
// [0, VocabSize).
func (g *GPT) Forward(idx *tensor.Tensor) *tensor.Tensor {
	return g.LmHead.Forward(g.hidden(idx))
}

// ForwardLoss returns the logits [B, T, VocabSize] and the mean
// cross-entropy against targets [B, T] (positions with target -1 are
// ignored), like nanoGPT's forward(idx, targets). ForwardLoss panics like
// Forward, or if targets is not an Int64 tensor of idx's shape with values
// in [0, VocabSize) or -1.
func (g *GPT) ForwardLoss(idx, targets *tensor.Tensor) (logits, loss *tensor.Tensor) {
	logits = g.Forward(idx)
	v := logits.Size(-1)
	loss = tensor.CrossEntropyIgnore(logits.Reshape(-1, v), targets.Reshape(-1), -1)
	return logits, loss
}

// Loss returns the mean cross-entropy of the next-token predictions for idx
// [B, T] against targets [B, T], ignoring targets equal to -1. Loss panics
// like ForwardLoss.
func (g *GPT) Loss(idx, targets *tensor.Tensor) *tensor.Tensor {
	_, loss := g.ForwardLoss(idx, targets)
	return loss
}

// NamedParameters returns the parameters with nanoGPT's names in the order
// of its named_parameters: transformer.wte.weight, transformer.wpe.weight,
// transformer.h.0.ln_1.weight, …, transformer.ln_f.weight (and .bias).
// lm_head.weight is the same tensor as transformer.wte.weight and is not
// listed again.
func (g *GPT) NamedParameters() []NamedParam {
	var ps []NamedParam
	ps = append(ps, prefixed("transformer.wte", g.Wte.NamedParameters())...)
	ps = append(ps, prefixed("transformer.wpe", g.Wpe.NamedParameters())...)
	for i, b := range g.H {
		ps = append(ps, prefixed(fmt.Sprintf("transformer.h.%d", i), b.NamedParameters())...)
	}
	return append(ps, prefixed("transformer.ln_f", g.LnF.NamedParameters())...)
}

// Parameters returns the parameters in the order of NamedParameters.
func (g *GPT) Parameters() []*tensor.Tensor { return params(g.NamedParameters()) }

// Train switches dropout on.
func (g *GPT) Train() {
	g.Drop.Train()
	for _, b := range g.H {
		b.Train()
	}
	g.LmHead.Train()
}

// Eval switches dropout off.
func (g *GPT) Eval() {
	g.Drop.Eval()
	for _, b := range g.H {
		b.Eval()
	}
	g.LmHead.Eval()
}

// tiedParameters implements tiedModule: lm_head.weight is wte's weight.
func (g *GPT) tiedParameters() []NamedParam {
	return []NamedParam{{"lm_head.weight", g.LmHead.Weight}}
}

var maskBuffer = regexp.MustCompile(`^transformer\.h\.[0-9]+\.attn\.bias$`)

// ignoredKey implements ignoringModule: nanoGPT's causal-mask buffers
// (transformer.h.N.attn.bias, present without flash attention) carry no
// weights.
func (g *GPT) ignoredKey(name string) bool { return maskBuffer.MatchString(name) }

// String prints the module tree like PyTorch's repr of nanoGPT's model,
// with parameter counts.
func (g *GPT) String() string {
	blocks := make([]child, len(g.H))
	for i, b := range g.H {
		blocks[i] = child{fmt.Sprint(i), b}
	}
	nBlocks := 0
	for _, b := range g.H {
		nBlocks += NumParams(b)
	}
	transformer := stringFunc(func() string {
		return treeString("ModuleDict", NumParams(g), []child{
			{"wte", g.Wte}, {"wpe", g.Wpe}, {"drop", g.Drop},
			{"h", stringFunc(func() string { return treeString("ModuleList", nBlocks, blocks) })},
			{"ln_f", g.LnF},
		})
	})
	lmHead := stringFunc(func() string {
		return fmt.Sprintf("Linear(in_features=%d, out_features=%d, bias=False)  # tied to transformer.wte.weight", g.LmHead.In, g.LmHead.Out)
	})
	return treeString("GPT", NumParams(g), []child{{"transformer", transformer}, {"lm_head", lmHead}})
}

type stringFunc func() string

func (f stringFunc) String() string { return f() }
