package nn

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/wickml/wick/internal/boundedread"
	"github.com/wickml/wick/safetensors"
	"github.com/wickml/wick/tensor"
)

// ErrBadConfig is wrapped by the errors of LoadPretrained and
// ReadPretrainedConfig about a config.json that is malformed or describes
// a model Wick's GPT cannot be.
var ErrBadConfig = errors.New("unsupported config")

// The files of a Hugging Face model directory.
const (
	hfConfigFile = "config.json"
	hfWeights    = safetensors.WeightsFile
	hfIndex      = safetensors.IndexFile
)

// LoadPretrained reads a GPT-2 model saved in Hugging Face's format and
// returns it as a GPT with nanoGPT's names, as nanoGPT's
// GPT.from_pretrained does. name is a directory, or one of the hub names
// gpt2, gpt2-medium, gpt2-large and gpt2-xl, found in the Hugging Face
// cache (see PretrainedDir). The directory holds:
//
//   - config.json, whose n_embd, n_layer, n_head, n_positions (BlockSize)
//     and vocab_size give the shape, and whose activation_function chooses
//     the MLP's GELU: GPT-2's "gelu_new" (and "gelu_pytorch_tanh") give
//     ActGELUTanh, "gelu" ActGELU (see ReadPretrainedConfig);
//   - model.safetensors, or shards listed by model.safetensors.index.json.
//     Names may carry the "transformer." prefix (GPT2LMHeadModel) or not
//     (GPT2Model). The Conv1D weights (attn.c_attn, attn.c_proj, mlp.c_fc,
//     mlp.c_proj), stored [in, out], are transposed into Linear's
//     [out, in]. The attention-mask buffers attn.bias and attn.masked_bias
//     are skipped. lm_head.weight may be absent (it is tied to wte);
//     when present it must equal wte.weight. Tensors may be F32, F16 or
//     BF16 (converted to float32, or kept in bfloat16 or float16 by
//     LoadPretrainedWith); any other dtype is an error.
//
// The weights are streamed from the files into the model's tensors, so
// loading needs little memory beyond the float32 model itself (the largest
// Conv1D weight and a few MiB of buffers). The model is built on the
// default device with dropout 0 and starts in training mode, like NewGPT's;
// its parameters require gradients, ready for fine-tuning.
//
// Every problem is reported as an error naming the file and the tensor: a
// missing file (wrapping fs.ErrNotExist), a config.json that disagrees with
// the weights (ErrShapeMismatch, ErrMissingTensor, ErrUnexpectedTensor) or
// that Wick cannot build (ErrBadConfig), a truncated file (ErrTruncated), a
// dtype other than F32, F16 or BF16 (ErrDTypeMismatch), a NaN or an
// infinity among the weights (ErrNonFinite, found as they stream in).
// config.json, the index, every header, name, shape, dtype and file length
// are checked before any weight is read; a model is returned only once it
// is complete, never with an error.
func LoadPretrained(name string) (*GPT, error) { return LoadPretrainedWith(name, LoadOptions{}) }

// ReadPretrainedConfig reads the config.json of the Hugging Face GPT-2
// model in dir (a directory, or a hub name: see PretrainedDir) and returns
// the GPTConfig that LoadPretrained builds: the sizes from n_embd,
// n_layer, n_head, n_positions and vocab_size, Bias true, Dropout 0, and
// the Activation of activation_function ("gelu_new", Hugging Face's
// default, when absent). It returns an error wrapping ErrBadConfig for a
// model Wick's GPT cannot be: a model_type other than gpt2, a size missing,
// layer_norm_epsilon other than 1e-5 (Wick's GPT uses 1e-5, as GPT-2 and
// nanoGPT do), n_inner other than 4·n_embd, attention scaled otherwise
// than by 1/√head_size.
func ReadPretrainedConfig(dir string) (GPTConfig, error) {
	return readDirConfig("ReadPretrainedConfig", dir, readHFConfig)
}

// readDirConfig reads the config.json of the model in dir (a directory or
// a hub name, as PretrainedDir resolves it) with read, wrapping read's
// error with op's name.
func readDirConfig[T any](op, dir string, read func(path string) (T, error)) (T, error) {
	var zero T
	d, err := PretrainedDir(dir)
	if err != nil {
		return zero, err
	}
	cfg, err := read(filepath.Join(d, hfConfigFile))
	if err != nil {
		return zero, fmt.Errorf("nn: %s: %w", op, err)
	}
	return cfg, nil
}

// hfConfig holds the fields of a Hugging Face GPT2Config that matter.
type hfConfig struct {
	ModelType                  *string  `json:"model_type"`
	VocabSize                  *int     `json:"vocab_size"`
	NPositions                 *int     `json:"n_positions"`
	NEmbd                      *int     `json:"n_embd"`
	NLayer                     *int     `json:"n_layer"`
	NHead                      *int     `json:"n_head"`
	NInner                     *int     `json:"n_inner"`
	LayerNormEpsilon           *float64 `json:"layer_norm_epsilon"`
	ActivationFunction         *string  `json:"activation_function"`
	ScaleAttnWeights           *bool    `json:"scale_attn_weights"`
	ScaleAttnByInverseLayerIdx *bool    `json:"scale_attn_by_inverse_layer_idx"`
}

// readHFConfig reads and checks config.json at path.
func readHFConfig(path string) (GPTConfig, error) {
	b, err := boundedread.ReadFile(path, maxConfigBytes, "a model's config.json")
	if err != nil {
		return GPTConfig{}, err // an *fs.PathError naming path
	}
	var c hfConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return GPTConfig{}, fmt.Errorf("%s: %w: not a JSON object of GPT-2 settings: %v", path, ErrBadConfig, err)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %w: "+format, append([]any{path, ErrBadConfig}, args...)...))
	}
	if c.ModelType != nil && *c.ModelType != "gpt2" {
		bad("model_type is %q, LoadPretrained reads gpt2 (LoadCausalLM reads llama, mistral, qwen2 and qwen3 as well)", *c.ModelType)
	}
	size := func(key string, v *int) int {
		if v == nil {
			bad("%s is missing", key)
			return 0
		}
		if *v <= 0 {
			bad("%s must be positive, got %d", key, *v)
		}
		return *v
	}
	cfg := GPTConfig{
		VocabSize: size("vocab_size", c.VocabSize),
		BlockSize: size("n_positions", c.NPositions),
		NLayer:    size("n_layer", c.NLayer),
		NHead:     size("n_head", c.NHead),
		NEmbd:     size("n_embd", c.NEmbd),
		Bias:      true,
	}
	if cfg.NHead > 0 && cfg.NEmbd%cfg.NHead != 0 {
		bad("n_embd %d is not a multiple of n_head %d", cfg.NEmbd, cfg.NHead)
	}
	if c.NInner != nil && *c.NInner != 4*cfg.NEmbd {
		bad("n_inner %d is not 4·n_embd = %d (Wick's MLP is 4·n_embd wide)", *c.NInner, 4*cfg.NEmbd)
	}
	if c.LayerNormEpsilon != nil && float32(*c.LayerNormEpsilon) != 1e-5 {
		bad("layer_norm_epsilon %g is not supported (Wick's GPT uses 1e-5, like GPT-2)", *c.LayerNormEpsilon)
	}
	act := "gelu_new" // GPT2Config's default
	if c.ActivationFunction != nil {
		act = *c.ActivationFunction
	}
	switch act {
	case "gelu_new", "gelu_pytorch_tanh":
		cfg.Activation = ActGELUTanh
	case "gelu":
		cfg.Activation = ActGELU
	default:
		bad("activation_function %q is not supported (gelu_new, gelu_pytorch_tanh or gelu)", act)
	}
	if c.ScaleAttnWeights != nil && !*c.ScaleAttnWeights {
		bad("scale_attn_weights false is not supported (Wick scales attention by 1/√head_size)")
	}
	if c.ScaleAttnByInverseLayerIdx != nil && *c.ScaleAttnByInverseLayerIdx {
		bad("scale_attn_by_inverse_layer_idx true is not supported")
	}
	if len(errs) > 0 {
		return GPTConfig{}, problemList(errs)
	}
	if err := cfg.checkSize(); err != nil { // before anything is built or read
		return GPTConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// hubBuffer matches the attention-mask buffers of Hugging Face's GPT-2,
// which carry no weights.
var hubBuffer = regexp.MustCompile(`^h\.[0-9]+\.attn\.(bias|masked_bias)$`)

// conv1D reports whether the hub stores the weight of this (unprefixed)
// name as a Conv1D, [in, out].
func conv1D(name string) bool {
	for _, s := range []string{".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// maxProblems bounds the problems one error lists.
const maxProblems = 8

// loadPretrained is LoadPretrained for a directory, with errors that do
// not say "nn: LoadPretrained".
func loadPretrained(dir string, dt tensor.DType) (*GPT, error) {
	cfg, err := readHFConfig(filepath.Join(dir, hfConfigFile))
	if err != nil {
		return nil, err
	}
	files, index, err := weightFiles(dir)
	if err != nil {
		return nil, err
	}
	var problems []error
	srcs := map[string]*safetensors.Ref{} // by name without "transformer."
	for _, file := range files {
		h, err := safetensors.ReadFileHeader(file)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		for _, e := range h.Entries {
			name := strings.TrimPrefix(e.Name, "transformer.")
			if hubBuffer.MatchString(name) {
				continue
			}
			if prev := srcs[name]; prev != nil {
				problems = append(problems, fmt.Errorf("%s: tensor %q: %w: %s already holds it as %q", file, e.Name, ErrUnexpectedTensor, prev.File, prev.Name))
				continue
			}
			ref := h.Ref(e)
			srcs[name] = &ref
		}
	}
	if len(problems) > 0 {
		return nil, problemList(problems)
	}

	g := newGPTZeros(cfg, dt)
	sizes := fmt.Sprintf("n_embd %d, n_layer %d, vocab_size %d, n_positions %d", cfg.NEmbd, cfg.NLayer, cfg.VocabSize, cfg.BlockSize)
	checkSource := func(s *safetensors.Ref, want []int, layout string) {
		switch {
		case !s.Float():
			problems = append(problems, fmt.Errorf("%s: tensor %q: %w: dtype %s is not supported (Wick reads F32, F16 and BF16)", s.File, s.Name, ErrDTypeMismatch, s.DType))
		case !slices.Equal(s.Shape, want):
			problems = append(problems, fmt.Errorf("%s: tensor %q: %w: file has %v, config.json (%s) needs %v%s", s.File, s.Name, ErrShapeMismatch, s.Shape, sizes, want, layout))
		}
	}
	type load struct {
		src   *safetensors.Ref
		dst   *tensor.Tensor
		trans bool
	}
	var loads []load
	used := map[string]bool{}
	for _, p := range g.NamedParameters() {
		name := strings.TrimPrefix(p.Name, "transformer.")
		used[name] = true
		s := srcs[name]
		if s == nil {
			where := strings.Join(baseNames(files), ", ")
			if f, ok := index[name]; ok {
				where = f + ", where " + hfIndex + " puts it,"
			}
			problems = append(problems, fmt.Errorf("%s: tensor %q: %w: %s does not hold it (config.json: %s)", dir, name, ErrMissingTensor, where, sizes))
			continue
		}
		want, layout, trans := p.Param.Shape(), "", conv1D(name)
		if trans {
			want, layout = []int{want[1], want[0]}, " (a Conv1D weight, [in, out])"
		}
		checkSource(s, want, layout)
		loads = append(loads, load{s, p.Param, trans})
	}
	lmHead := srcs["lm_head.weight"]
	if lmHead != nil {
		used["lm_head.weight"] = true
		checkSource(lmHead, g.LmHead.Weight.Shape(), "")
	}
	problems = append(problems, unexpectedSources(srcs, used, "a GPT-2", sizes)...)
	if len(problems) > 0 {
		return nil, problemList(problems)
	}

	// Read in file order, each file front to back.
	sort.Slice(loads, func(i, j int) bool { return fileOrder(loads[i].src, loads[j].src) })
	r := safetensors.NewReaderSize(chunkBytes)
	defer r.Close()
	r.RequireFinite(true) // a NaN or an infinity is an error naming the tensor (ErrNonFinite)
	var stageLen int
	for _, l := range loads {
		if l.trans {
			stageLen = max(stageLen, l.src.N)
		}
	}
	stage := make([]float32, stageLen) // the transposed Conv1D weight being assembled
	var fill filler                    // writes the values, checking that 16-bit parameters hold them
	for _, l := range loads {
		s := l.src
		param := l.dst.Detach() // the parameter's storage, written in place without recording
		if !l.trans {
			if err := r.Each(*s, fill.set(param, s)); err != nil {
				return nil, err
			}
			continue
		}
		in, out := s.Shape[0], s.Shape[1]
		err := r.EachRows(*s, out, func(off int, v []float32) {
			i0, rows := off/out, len(v)/out // v is rows i0 … i0+rows−1 of the [in, out] source
			for j := range out {            // column j of the rows: a run of stage's row j
				dst := stage[j*in+i0 : j*in+i0+rows]
				for r := range dst {
					dst[r] = v[r*out+j]
				}
			}
		})
		if err != nil {
			return nil, err
		}
		fill.set(param, s)(0, stage[:s.N])
	}
	if fill.err != nil {
		return nil, fill.err
	}
	if lmHead != nil {
		if err := sameValues(r, lmHead, srcs["wte.weight"]); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// chunkBytes is the size of one read of the loaders (a variable for the
// tests, which set it while no load runs).
var chunkBytes = safetensors.DefaultChunkBytes

// weightFiles returns the safetensors files of the model in dir, and for a
// sharded model the index's map from tensor name (without "transformer.")
// to file name (see safetensors.ModelFiles).
func weightFiles(dir string) ([]string, map[string]string, error) {
	files, idx, err := safetensors.ModelFiles(dir)
	if err != nil || idx == nil {
		return files, nil, err
	}
	index := map[string]string{}
	for name, f := range idx {
		index[strings.TrimPrefix(name, "transformer.")] = f
	}
	return files, index, nil
}

// sameValues returns an error unless a and b (of one shape) hold the same
// values once converted to float32: a tied head stored beside the
// embedding it is tied to.
func sameValues(r *safetensors.Reader, a, b *safetensors.Ref) error {
	i, va, vb, err := r.FirstDifference(*a, *b)
	if err != nil {
		return err
	}
	if i >= 0 {
		return fmt.Errorf("%s: tensor %q: %w: element %d is %g but %q's is %g; the model ties %s to the token embedding", a.File, a.Name, ErrUnexpectedTensor, i, va, b.Name, vb, a.Name)
	}
	return nil
}

// newGPTZeros returns a GPT of cfg whose Linear and Embedding weights and
// biases are zero (LayerNorm's as NewLayerNorm makes them), for a loader
// to fill: NewGPT's random initialisation would cost time and memory for
// weights about to be overwritten. Its structure is NewGPTWith's. Its
// parameters are of dt (zerosOf).
func newGPTZeros(cfg GPTConfig, dt tensor.DType) *GPT {
	c := cfg.NEmbd
	z := func(shape ...int) *tensor.Tensor { return zerosOf(dt, shape...) }
	linear := func(in, out int) *Linear {
		l := &Linear{Weight: z(out, in), In: in, Out: out}
		if cfg.Bias {
			l.Bias = z(out)
		}
		return l
	}
	g := &GPT{
		Config: cfg,
		Wte:    &Embedding{Weight: z(cfg.VocabSize, c), Num: cfg.VocabSize, Dim: c},
		Wpe:    &Embedding{Weight: z(cfg.BlockSize, c), Num: cfg.BlockSize, Dim: c},
		Drop:   NewDropout(cfg.Dropout),
		LnF:    NewLayerNorm(c, cfg.Bias),
	}
	for range cfg.NLayer {
		g.H = append(g.H, &Block{
			Ln1: NewLayerNorm(c, cfg.Bias),
			Attn: &CausalSelfAttention{
				CAttn:       linear(c, 3*c),
				CProj:       linear(c, c),
				AttnDropout: NewDropout(cfg.Dropout),
				ResidDrop:   NewDropout(cfg.Dropout),
				NHead:       cfg.NHead,
				NEmbd:       c,
			},
			Ln2: NewLayerNorm(c, cfg.Bias),
			MLP: &MLP{
				CFc:   linear(c, 4*c),
				Gelu:  cfg.Activation.gelu(),
				CProj: linear(4*c, c),
				Drop:  NewDropout(cfg.Dropout),
			},
		})
	}
	g.LmHead = &Linear{Weight: g.Wte.Weight, In: c, Out: cfg.VocabSize}
	toDTypeSmall(g, dt)
	adviseHugePages(g)
	return g
}

// problemList returns errs as one error: the error itself when there is
// one, an errorList (which lists at most maxProblems) when there are more.
func problemList(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errorList(errs)
}

// baseNames returns the base names of paths.
func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// unexpectedSources returns an error wrapping ErrUnexpectedTensor for
// every tensor of srcs that used does not mark, in name order: model
// ("a GPT-2") of config.json (sizes) has no such weight.
func unexpectedSources(srcs map[string]*safetensors.Ref, used map[string]bool, model, sizes string) []error {
	var extra []string
	for name := range srcs {
		if !used[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	var errs []error
	for _, name := range extra {
		s := srcs[name]
		errs = append(errs, fmt.Errorf("%s: tensor %q: %w: %s of config.json (%s) has no such weight", s.File, s.Name, ErrUnexpectedTensor, model, sizes))
	}
	return errs
}

// fileOrder orders tensors as the loaders read them: by file, each file
// front to back.
func fileOrder(a, b *safetensors.Ref) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Offset < b.Offset
}
