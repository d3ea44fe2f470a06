package nn

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/wickml/wick/tensor"
)

// ErrBadConfig is wrapped by the errors of LoadPretrained and
// ReadPretrainedConfig about a config.json that is malformed or describes
// a model Wick's GPT cannot be.
var ErrBadConfig = errors.New("unsupported config")

// The files of a Hugging Face model directory.
const (
	hfConfigFile = "config.json"
	hfWeights    = "model.safetensors"
	hfIndex      = "model.safetensors.index.json"
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
//     BF16 (converted to float32); any other dtype is an error.
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
// dtype other than F32, F16 or BF16 (ErrDTypeMismatch). config.json, the
// index, every header, name, shape, dtype and file length are checked
// before any weight is read; a model is returned only once it is complete,
// never with an error.
func LoadPretrained(name string) (*GPT, error) {
	dir, err := PretrainedDir(name)
	if err != nil {
		return nil, err
	}
	g, err := loadPretrained(dir)
	if err != nil {
		return nil, fmt.Errorf("nn: LoadPretrained: %w", err)
	}
	return g, nil
}

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
	d, err := PretrainedDir(dir)
	if err != nil {
		return GPTConfig{}, err
	}
	cfg, err := readHFConfig(filepath.Join(d, hfConfigFile))
	if err != nil {
		return GPTConfig{}, fmt.Errorf("nn: ReadPretrainedConfig: %w", err)
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
	b, err := os.ReadFile(path)
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
		bad("model_type is %q, Wick reads gpt2", *c.ModelType)
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

// source is where one tensor lies in a safetensors file.
type source struct {
	file  string // path of the file
	name  string // name in the file
	dtype string
	shape []int
	begin int64 // byte offset of the data in the file
	n     int   // elements
}

// maxProblems bounds the problems one error lists.
const maxProblems = 8

// loadPretrained is LoadPretrained for a directory, with errors that do
// not say "nn: LoadPretrained".
func loadPretrained(dir string) (*GPT, error) {
	cfg, err := readHFConfig(filepath.Join(dir, hfConfigFile))
	if err != nil {
		return nil, err
	}
	files, index, err := weightFiles(dir)
	if err != nil {
		return nil, err
	}
	var problems []error
	srcs := map[string]*source{} // by name without "transformer."
	for _, file := range files {
		entries, dataStart, err := readHeaderFile(file)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		for _, e := range entries {
			name := strings.TrimPrefix(e.name, "transformer.")
			if hubBuffer.MatchString(name) {
				continue
			}
			if prev := srcs[name]; prev != nil {
				problems = append(problems, fmt.Errorf("%s: tensor %q: %w: %s already holds it as %q", file, e.name, ErrUnexpectedTensor, prev.file, prev.name))
				continue
			}
			srcs[name] = &source{file: file, name: e.name, dtype: e.dtype, shape: e.shape, begin: dataStart + e.begin, n: int((e.end - e.begin) / int64(dtypeSizes[e.dtype]))}
		}
	}
	if len(problems) > 0 {
		return nil, problemList(problems)
	}

	g := newGPTZeros(cfg)
	sizes := fmt.Sprintf("n_embd %d, n_layer %d, vocab_size %d, n_positions %d", cfg.NEmbd, cfg.NLayer, cfg.VocabSize, cfg.BlockSize)
	checkSource := func(s *source, want []int, layout string) {
		switch {
		case s.dtype != "F32" && s.dtype != "F16" && s.dtype != "BF16":
			problems = append(problems, fmt.Errorf("%s: tensor %q: %w: dtype %s is not supported (Wick reads F32, F16 and BF16)", s.file, s.name, ErrDTypeMismatch, s.dtype))
		case !slices.Equal(s.shape, want):
			problems = append(problems, fmt.Errorf("%s: tensor %q: %w: file has %v, config.json (%s) needs %v%s", s.file, s.name, ErrShapeMismatch, s.shape, sizes, want, layout))
		}
	}
	type load struct {
		src   *source
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
	var extra []string
	for name := range srcs {
		if !used[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		s := srcs[name]
		problems = append(problems, fmt.Errorf("%s: tensor %q: %w: a GPT-2 of config.json (%s) has no such weight", s.file, s.name, ErrUnexpectedTensor, sizes))
	}
	if len(problems) > 0 {
		return nil, problemList(problems)
	}

	// Read in file order, each file front to back.
	sort.Slice(loads, func(i, j int) bool {
		a, b := loads[i].src, loads[j].src
		if a.file != b.file {
			return a.file < b.file
		}
		return a.begin < b.begin
	})
	r := newWeightReader()
	defer r.close()
	var stageLen int
	for _, l := range loads {
		if l.trans {
			stageLen = max(stageLen, l.src.n)
		}
	}
	stage := make([]float32, stageLen) // the transposed Conv1D weight being assembled
	for _, l := range loads {
		s := l.src
		param := l.dst.Detach() // the parameter's storage, written in place without recording
		if !l.trans {
			if err := r.each(s, func(off int, v []float32) { param.SetFloat32s(off, v) }); err != nil {
				return nil, err
			}
			continue
		}
		in, out := s.shape[0], s.shape[1]
		err := r.eachRows(s, out, func(off int, v []float32) {
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
		param.SetFloat32s(0, stage[:s.n])
	}
	if lmHead != nil {
		if err := r.sameValues(lmHead, srcs["wte.weight"]); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// weightFiles returns the safetensors files of the model in dir, and for a
// sharded model the index's map from tensor name (without "transformer.")
// to file name.
func weightFiles(dir string) ([]string, map[string]string, error) {
	single := filepath.Join(dir, hfWeights)
	if _, err := os.Stat(single); err == nil {
		return []string{single}, nil, nil
	}
	indexPath := filepath.Join(dir, hfIndex)
	b, err := os.ReadFile(indexPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s: neither %s nor %s is there (Wick reads the safetensors format, not pytorch_model.bin): %w", dir, hfWeights, hfIndex, fs.ErrNotExist)
	}
	if err != nil {
		return nil, nil, err
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &idx); err != nil || len(idx.WeightMap) == 0 {
		if err == nil {
			err = errors.New("no weight_map")
		}
		return nil, nil, fmt.Errorf("%s: %w: %v", indexPath, ErrCorruptHeader, err)
	}
	index := map[string]string{}
	seen := map[string]bool{}
	var files []string
	for name, f := range idx.WeightMap {
		if f == "" || filepath.Base(f) != f || f == "." || f == ".." {
			return nil, nil, fmt.Errorf("%s: tensor %q: %w: file name %q is not a file of the directory", indexPath, name, ErrCorruptHeader, f)
		}
		index[strings.TrimPrefix(name, "transformer.")] = f
		if !seen[f] {
			seen[f] = true
			files = append(files, filepath.Join(dir, f))
		}
	}
	sort.Strings(files)
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			var first string // a tensor the index puts there, for the message
			for name, g := range idx.WeightMap {
				if filepath.Join(dir, g) == f && (first == "" || name < first) {
					first = name
				}
			}
			return nil, nil, fmt.Errorf("%s: tensor %q: %s lists it in a shard that cannot be read: %w", indexPath, first, hfIndex, err)
		}
	}
	return files, index, nil
}

// readHeaderFile reads and checks the header of the safetensors file at
// path, and that the file is long enough for every tensor. It returns the
// entries and the offset of the data section.
func readHeaderFile(path string) ([]entry, int64, error) {
	entries, _, start, err := readHeaderMeta(path)
	return entries, start, err
}

// readHeaderMeta is readHeaderFile that also returns the header's metadata.
func readHeaderMeta(path string) ([]entry, map[string]string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, 0, err
	}
	size := fi.Size()
	var lenBuf [8]byte
	if n, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %w: %d of the 8 bytes of header length present", path, ErrTruncated, n)
	}
	hlen := binary.LittleEndian.Uint64(lenBuf[:])
	if hlen > maxHeaderLen {
		return nil, nil, 0, fmt.Errorf("%s: %w: header length %d exceeds the limit of %d bytes", path, ErrCorruptHeader, hlen, maxHeaderLen)
	}
	if int64(hlen) > size-8 {
		return nil, nil, 0, fmt.Errorf("%s: %w: the header needs %d bytes, the file has %d after the length", path, ErrTruncated, hlen, size-8)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %w: reading the header: %v", path, ErrTruncated, err)
	}
	entries, meta, err := parseHeader(hdr)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	start := 8 + int64(hlen)
	for _, e := range entries {
		if start+e.end > size {
			return nil, nil, 0, fmt.Errorf("%s: tensor %q: %w: its data ends at byte %d of the file, which has %d", path, e.name, ErrTruncated, start+e.end, size)
		}
	}
	return entries, meta, start, nil
}

// weightReader streams tensors out of safetensors files as float32, a
// chunk at a time, through buffers it reuses.
type weightReader struct {
	files map[string]*os.File
	raw   []byte
	vals  []float32
	raw2  []byte // for sameValues
	vals2 []float32
}

// chunkBytes is the size of one read.
var chunkBytes = 256 << 10 // a variable for the tests

func newWeightReader() *weightReader {
	return &weightReader{files: map[string]*os.File{}, raw: make([]byte, chunkBytes), vals: make([]float32, chunkBytes/2)}
}

func (r *weightReader) close() {
	for _, f := range r.files {
		f.Close()
	}
}

func (r *weightReader) open(path string) (*os.File, error) {
	if f := r.files[path]; f != nil {
		return f, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r.files[path] = f
	return f, nil
}

// read decodes elements [off, off+len(dst)) of s into dst through raw.
func read(f *os.File, s *source, off int, dst []float32, raw []byte) error {
	es := dtypeSizes[s.dtype]
	b := raw[:len(dst)*es]
	if _, err := f.ReadAt(b, s.begin+int64(off*es)); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: the file ends inside its data", ErrTruncated)
		}
		return fmt.Errorf("%s: tensor %q: %w", s.file, s.name, err)
	}
	decode(dst, b, s.dtype)
	return nil
}

// each calls fn with consecutive chunks of s's elements, converted to
// float32, and the index of each chunk's first element.
func (r *weightReader) each(s *source, fn func(off int, v []float32)) error {
	return r.eachRows(s, 1, fn)
}

// eachRows is each with chunks of whole rows of rowLen elements (s.n is a
// multiple of rowLen).
func (r *weightReader) eachRows(s *source, rowLen int, fn func(off int, v []float32)) error {
	f, err := r.open(s.file)
	if err != nil {
		return err
	}
	es := dtypeSizes[s.dtype]
	per := chunkBytes / es
	per -= per % rowLen
	if per == 0 { // a row longer than a chunk
		per = rowLen
		if len(r.raw) < per*es {
			r.raw = make([]byte, per*es)
		}
		if len(r.vals) < per {
			r.vals = make([]float32, per)
		}
	}
	for off := 0; off < s.n; off += per {
		v := r.vals[:min(per, s.n-off)]
		if err := read(f, s, off, v, r.raw); err != nil {
			return err
		}
		fn(off, v)
	}
	return nil
}

// sameValues returns an error unless a and b (of one shape) hold the same
// values once converted to float32.
func (r *weightReader) sameValues(a, b *source) error {
	fa, err := r.open(a.file)
	if err != nil {
		return err
	}
	fb, err := r.open(b.file)
	if err != nil {
		return err
	}
	if r.raw2 == nil {
		r.raw2, r.vals2 = make([]byte, chunkBytes), make([]float32, chunkBytes/2)
	}
	per := chunkBytes / max(dtypeSizes[a.dtype], dtypeSizes[b.dtype])
	for off := 0; off < a.n; off += per {
		k := min(per, a.n-off)
		va, vb := r.vals[:k], r.vals2[:k]
		if err := read(fa, a, off, va, r.raw); err != nil {
			return err
		}
		if err := read(fb, b, off, vb, r.raw2); err != nil {
			return err
		}
		for i := range va {
			if math.Float32bits(va[i]) != math.Float32bits(vb[i]) {
				return fmt.Errorf("%s: tensor %q: %w: element %d is %g but %q's is %g; Wick's GPT ties lm_head.weight to the token embedding", a.file, a.name, ErrUnexpectedTensor, off+i, va[i], b.name, vb[i])
			}
		}
	}
	return nil
}

// decode converts the little-endian F32, F16 or BF16 values in raw to dst.
func decode(dst []float32, raw []byte, dtype string) {
	switch dtype {
	case "F32":
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case "F16":
		for i := range dst {
			dst[i] = halfToFloat32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case "BF16":
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	default:
		panic(&tensor.Error{Pkg: "nn", Op: "decode", Msg: fmt.Sprintf("dtype %q is not F32, F16 or BF16 (the caller checks dtypes first)", dtype)})
	}
}

// halfToFloat32 converts an IEEE 754 binary16 value to float32 (exactly:
// every half is a float32).
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch exp {
	case 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case 0: // zero or subnormal: mant·2⁻²⁴
		v := float32(mant) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// newGPTZeros returns a GPT of cfg whose Linear and Embedding weights and
// biases are zero (LayerNorm's as NewLayerNorm makes them), for a loader
// to fill: NewGPT's random initialisation would cost time and memory for
// weights about to be overwritten. Its structure is NewGPTWith's.
func newGPTZeros(cfg GPTConfig) *GPT {
	c := cfg.NEmbd
	z := func(shape ...int) *tensor.Tensor { return tensor.Zeros(shape...).RequiresGrad() }
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
