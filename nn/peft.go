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
	"slices"
	"strings"

	"github.com/wickml/wick/internal/atomicfile"
	"github.com/wickml/wick/safetensors"
	"github.com/wickml/wick/tensor"
)

// The files of a PEFT adapter directory.
const (
	AdapterConfigFile  = "adapter_config.json"
	AdapterWeightsFile = "adapter_model.safetensors"
)

// peftPrefix is what PEFT's PeftModel puts in front of the base model's
// module names in a saved adapter.
const peftPrefix = "base_model.model."

// peftConfig is the part of PEFT's adapter_config.json (LoraConfig) that
// Wick writes and reads.
type peftConfig struct {
	AlphaPattern      map[string]any  `json:"alpha_pattern"`
	AutoMapping       any             `json:"auto_mapping"`
	BaseModel         string          `json:"base_model_name_or_path"`
	Bias              string          `json:"bias"`
	FanInFanOut       bool            `json:"fan_in_fan_out"`
	InferenceMode     bool            `json:"inference_mode"`
	InitLoraWeights   any             `json:"init_lora_weights"`
	LayersPattern     any             `json:"layers_pattern"`
	LayersToTransform any             `json:"layers_to_transform"`
	LoraAlpha         float64         `json:"lora_alpha"`
	LoraDropout       float32         `json:"lora_dropout"`
	ModulesToSave     any             `json:"modules_to_save"`
	PeftType          string          `json:"peft_type"`
	R                 int             `json:"r"`
	RankPattern       map[string]any  `json:"rank_pattern"`
	Revision          any             `json:"revision"`
	TargetModules     json.RawMessage `json:"target_modules"`
	TaskType          string          `json:"task_type"`
	UseDora           bool            `json:"use_dora"`
	UseRSLoRA         bool            `json:"use_rslora"`
}

// SaveAdapter writes the adapters into dir (created if needed) in PEFT's
// layout, so that PeftModel.from_pretrained(model, dir) loads them:
// adapter_config.json (peft_type LORA, task_type CAUSAL_LM, r, lora_alpha,
// lora_dropout, target_modules, bias "none", fan_in_fan_out false) and
// adapter_model.safetensors with the tensors
// base_model.model.NAME.lora_A.weight [r, in] and NAME.lora_B.weight
// [out, r] in float32.
//
// fan_in_fan_out is false because Wick's Linear keeps PyTorch's [out, in]
// layout. The adapter tensors do not depend on it: PEFT's lora_A and lora_B
// have the shapes above for nn.Linear and for GPT-2's Conv1D alike, and
// PEFT sets fan_in_fan_out to True itself (with a warning) when it finds a
// Conv1D, so an adapter for Wick's GPT-2 (transformer.h.N.attn.c_attn, …)
// loads into Hugging Face's GPT2LMHeadModel unchanged.
//
// SaveAdapter returns an error if the adapters were removed by
// MergeAndUnload or if a file cannot be written.
func (l *LoRA) SaveAdapter(dir string) error {
	if l.removed {
		return errors.New("nn: SaveAdapter: the adapters were merged and removed (MergeAndUnload)")
	}
	js, err := l.peftConfigJSON()
	if err != nil {
		return fmt.Errorf("nn: SaveAdapter: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("nn: SaveAdapter: %w", err)
	}
	// the weights first, then the config: a reader that finds the new
	// config finds the new weights (each file is replaced atomically)
	sd := StateDict{}
	for _, p := range l.NamedParameters() {
		sd[peftPrefix+p.Name] = p.Param.Detach().To(tensor.CPU).Contiguous()
	}
	if err := SaveStateDictFile(filepath.Join(dir, AdapterWeightsFile), sd, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("nn: SaveAdapter: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, AdapterConfigFile), func(w io.Writer) error {
		_, err := w.Write(append(js, '\n'))
		return err
	}); err != nil {
		return fmt.Errorf("nn: SaveAdapter: %w", err)
	}
	return nil
}

// peftConfigJSON returns the adapters' adapter_config.json.
func (l *LoRA) peftConfigJSON() ([]byte, error) {
	var targets any = l.Config.TargetModules
	if l.Config.TargetRegexp != "" {
		targets = l.Config.TargetRegexp
	}
	tm, err := json.Marshal(targets)
	if err != nil {
		return nil, err
	}
	cfg := peftConfig{
		AlphaPattern: map[string]any{}, RankPattern: map[string]any{},
		BaseModel: l.Config.BaseModel, Bias: "none", InferenceMode: true, InitLoraWeights: true,
		LoraAlpha: l.Config.Alpha, LoraDropout: l.Config.Dropout, PeftType: "LORA", R: l.Config.R,
		TargetModules: tm, TaskType: "CAUSAL_LM",
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// LoadAdapter reads a PEFT LoRA adapter from dir (adapter_config.json and
// adapter_model.safetensors, as SaveAdapter or PEFT's save_pretrained
// writes them) and applies it to m with ApplyLoRA, with the file's
// weights (stored as F32, BF16 or F16; kept in float32). The adapters
// start in evaluation mode (PEFT's inference_mode); call Train on the LoRA
// to fine-tune them further.
//
// Every tensor's name, dtype, shape and size is checked against the config
// and m's layers before any tensor data is read, and the data are checked
// to be finite. LoadAdapter returns an error naming the file and what is
// wrong, in one line, and leaves m unchanged, for a config that is not
// LoRA or uses features Wick does not have (bias other than "none", DoRA,
// rank_pattern, alpha_pattern, rsLoRA, layers_to_transform,
// modules_to_save), target modules that match no Linear layer of m, a
// tensor for a module that is not a target, a target without its tensors,
// tensors whose shapes do not fit the layer and r (an adapter for another
// base model), a header larger than MaxAdapterHeaderBytes, a truncated
// file, or a weight that is NaN or infinite.
func LoadAdapter(dir string, m Module) (*LoRA, error) {
	cfg, err := ReadAdapterConfig(dir)
	if err != nil {
		return nil, err
	}
	cpath := filepath.Join(dir, AdapterConfigFile)
	re, err := cfg.validate()
	if err != nil {
		return nil, fmt.Errorf("nn: LoadAdapter: %s: %s", cpath, strings.TrimPrefix(err.Error(), "nn: LoRA: "))
	}
	layers := map[string]*Linear{}
	var order []string
	for _, nm := range NamedModules(m) {
		if lin, ok := nm.Module.(*Linear); ok && nm.Name != "" && cfg.matches(re, nm.Name) {
			layers[nm.Name] = lin
			order = append(order, nm.Name)
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("nn: LoadAdapter: %s: target_modules %s match no Linear layer of the model (Linear layers: %s)", cpath, cfg.targetString(), strings.Join(linearNames(m), ", "))
	}
	wpath := filepath.Join(dir, AdapterWeightsFile)
	sd, err := readAdapterWeights(wpath, cfg.R, layers, order)
	if err != nil {
		return nil, fmt.Errorf("nn: LoadAdapter: %s: %w", wpath, err)
	}
	l, err := ApplyLoRA(m, cfg)
	if err != nil {
		return nil, fmt.Errorf("nn: LoadAdapter: %w", err)
	}
	l.setWeights(sd)
	l.Eval()
	return l, nil
}

// ReadAdapterConfig reads dir's adapter_config.json (PEFT's LoraConfig) as
// a LoRAConfig, refusing the PEFT features Wick does not have (see
// LoadAdapter). The config is not checked against a model.
func ReadAdapterConfig(dir string) (LoRAConfig, error) {
	cpath := filepath.Join(dir, AdapterConfigFile)
	raw, err := readFileLimited(cpath, maxAdapterConfigBytes)
	if err != nil {
		return LoRAConfig{}, fmt.Errorf("nn: LoadAdapter: %w", err)
	}
	var pc peftConfig
	if err := json.Unmarshal(raw, &pc); err != nil {
		return LoRAConfig{}, fmt.Errorf("nn: LoadAdapter: %s: %w", cpath, err)
	}
	cfg, err := pc.loraConfig()
	if err != nil {
		return LoRAConfig{}, fmt.Errorf("nn: LoadAdapter: %s: %s", cpath, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return cfg, nil
}

// MaxAdapterHeaderBytes bounds the JSON header of adapter_model.safetensors
// that LoadAdapter reads: 16 MiB describes some 100 000 tensors, far more
// than an adapter of any model has.
const MaxAdapterHeaderBytes = 16 << 20

// maxAdapterConfigBytes bounds adapter_config.json.
const maxAdapterConfigBytes = 1 << 20

// readFileLimited reads the file at path, failing without reading it all
// when it is longer than limit bytes.
func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes; it is not an adapter config", path, limit)
	}
	return b, nil
}

// readAdapterWeights reads the adapter tensors of the layers (in order)
// from the safetensors file at path, as float32 tensors keyed by their
// names without peftPrefix. It checks the header first: its length, then
// every entry's name, dtype and shape against r and the layers, then that
// the file holds every entry's data; only then it reads the data, and
// checks that every value is finite.
func readAdapterWeights(path string, r int, layers map[string]*Linear, order []string) (StateDict, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, pathless(err)
	}
	defer f.Close()
	var lenBuf [8]byte
	if n, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("%w: %d of the 8 bytes of header length present", ErrTruncated, n)
	}
	hlen := binary.LittleEndian.Uint64(lenBuf[:])
	if hlen > MaxAdapterHeaderBytes {
		return nil, fmt.Errorf("%w: header length %d exceeds the %d bytes an adapter's header may have", ErrCorruptHeader, hlen, MaxAdapterHeaderBytes)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return nil, fmt.Errorf("%w: the header has fewer than its %d bytes", ErrTruncated, hlen)
	}
	entries, _, err := safetensors.ParseHeader(hdr)
	if err != nil {
		return nil, err
	}
	byName := map[string]safetensors.Entry{}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name, peftPrefix)
		mod, kind, ok2 := strings.Cut(rest, ".lora_")
		switch {
		case !ok || !ok2 || (kind != "A.weight" && kind != "B.weight"):
			return nil, fmt.Errorf("tensor %q is not a LoRA weight (want %sNAME.lora_A.weight or .lora_B.weight)", e.Name, peftPrefix)
		case layers[mod] == nil:
			return nil, fmt.Errorf("tensor %q is for module %q, which is not a targeted Linear layer of the model", e.Name, mod)
		case e.DType != "F32" && e.DType != "BF16" && e.DType != "F16":
			return nil, fmt.Errorf("tensor %q: %w: dtype %s (want F32, BF16 or F16)", e.Name, ErrDTypeMismatch, e.DType)
		}
		byName[rest] = e
	}
	var refs []safetensors.Ref
	st, err := f.Stat()
	if err != nil {
		return nil, pathless(err)
	}
	start := 8 + int64(hlen)
	for _, name := range order {
		lin := layers[name]
		for _, w := range []struct {
			kind  string
			shape []int
		}{{"A", []int{r, lin.In}}, {"B", []int{lin.Out, r}}} {
			key := name + ".lora_" + w.kind + ".weight"
			e, ok := byName[key]
			switch {
			case !ok:
				return nil, fmt.Errorf("target module %q has no tensor %q: %w", name, peftPrefix+key, ErrMissingTensor)
			case !slices.Equal(e.Shape, w.shape):
				hint := ""
				if w.kind == "A" && len(e.Shape) == 2 && e.Shape[0] == r || w.kind == "B" && len(e.Shape) == 2 && e.Shape[1] == r {
					hint = ": an adapter for another base model?"
				}
				return nil, fmt.Errorf("tensor %q has shape %v; want %v (r=%d, layer %d→%d)%s", peftPrefix+key, e.Shape, w.shape, r, lin.In, lin.Out, hint)
			case start+e.End > st.Size():
				return nil, fmt.Errorf("tensor %q: %w: its data end at byte %d of the file, which has %d", peftPrefix+key, ErrTruncated, start+e.End, st.Size())
			}
			h := safetensors.FileHeader{Path: path, DataStart: start}
			refs = append(refs, h.Ref(e))
		}
	}
	rd := safetensors.NewReader()
	defer rd.Close()
	sd := StateDict{}
	for _, ref := range refs {
		v := make([]float32, ref.N)
		bad := -1
		err := rd.Each(ref, func(off int, c []float32) {
			copy(v[off:], c)
			for i, x := range c {
				if bad < 0 && (math.IsNaN(float64(x)) || math.IsInf(float64(x), 0)) {
					bad = off + i
				}
			}
		})
		if err != nil {
			return nil, trimmed{err, path + ": "}
		}
		if bad >= 0 {
			return nil, fmt.Errorf("tensor %q holds %v at element %d: the adapter is broken", ref.Name, v[bad], bad)
		}
		sd[strings.TrimPrefix(ref.Name, peftPrefix)] = tensor.New(v, ref.Shape...)
	}
	return sd, nil
}

// pathless returns the cause of a *fs.PathError (the caller names the
// file), or err itself.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// setWeights replaces the adapters' weights by those of sd (names as
// NamedParameters gives them, checked already), on the adapters' device,
// as leaves that require a gradient.
func (l *LoRA) setWeights(sd StateDict) {
	for _, name := range l.names {
		a := l.layers[name].lora
		dev := a.a.Device()
		a.a = sd[name+".lora_A.weight"].To(dev).Contiguous().Detach().RequiresGrad()
		a.b = sd[name+".lora_B.weight"].To(dev).Contiguous().Detach().RequiresGrad()
	}
}

// LoadStateDict sets the adapters' weights from sd, whose names are those
// of NamedParameters (NAME.lora_A.weight, NAME.lora_B.weight; a leading
// "base_model.model." is accepted too), as when resuming a run. It returns
// an error naming the tensor, and changes nothing, if a tensor is missing,
// unexpected, not float32, of the wrong shape or not finite. The values
// are copied into the adapters' tensors, so an optimizer built on
// Parameters before keeps training them.
func (l *LoRA) LoadStateDict(sd StateDict) error {
	if l.removed {
		return errors.New("nn: LoRA.LoadStateDict: the adapters were merged and removed (MergeAndUnload)")
	}
	in := StateDict{}
	for n, t := range sd {
		in[strings.TrimPrefix(n, peftPrefix)] = t
	}
	want := map[string]bool{}
	for _, p := range l.NamedParameters() {
		want[p.Name] = true
		t := in[p.Name]
		switch {
		case t == nil:
			return fmt.Errorf("nn: LoRA.LoadStateDict: %w %q", ErrMissingTensor, p.Name)
		case t.DType() != tensor.Float32:
			return fmt.Errorf("nn: LoRA.LoadStateDict: tensor %q: %w: %s, want float32", p.Name, ErrDTypeMismatch, t.DType())
		case !slices.Equal(t.Shape(), p.Param.Shape()):
			return fmt.Errorf("nn: LoRA.LoadStateDict: tensor %q: %w: %v, want %v", p.Name, ErrShapeMismatch, t.Shape(), p.Param.Shape())
		}
		for i, v := range t.Float32s() {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("nn: LoRA.LoadStateDict: tensor %q holds %v at element %d", p.Name, v, i)
			}
		}
	}
	for _, n := range in.Names() {
		if !want[n] {
			return fmt.Errorf("nn: LoRA.LoadStateDict: %w %q", ErrUnexpectedTensor, n)
		}
	}
	for _, p := range l.NamedParameters() {
		p.Param.Detach().CopyFrom(in[p.Name])
	}
	return nil
}

// loraConfig turns PEFT's config into a LoRAConfig, refusing what Wick does
// not implement.
func (pc peftConfig) loraConfig() (LoRAConfig, error) {
	var errs []error
	if pc.PeftType != "LORA" {
		errs = append(errs, fmt.Errorf("peft_type is %q; want \"LORA\"", pc.PeftType))
	}
	if pc.Bias != "" && pc.Bias != "none" {
		errs = append(errs, fmt.Errorf("bias %q is not supported (want \"none\")", pc.Bias))
	}
	if pc.UseDora {
		errs = append(errs, errors.New("use_dora is not supported"))
	}
	if pc.UseRSLoRA {
		errs = append(errs, errors.New("use_rslora is not supported"))
	}
	if len(pc.RankPattern) > 0 || len(pc.AlphaPattern) > 0 {
		errs = append(errs, errors.New("rank_pattern and alpha_pattern are not supported"))
	}
	if pc.LayersToTransform != nil || pc.ModulesToSave != nil {
		errs = append(errs, errors.New("layers_to_transform and modules_to_save are not supported"))
	}
	cfg := LoRAConfig{R: pc.R, Alpha: pc.LoraAlpha, Dropout: pc.LoraDropout, BaseModel: pc.BaseModel}
	var s string
	var list []string
	switch {
	case len(pc.TargetModules) == 0 || string(pc.TargetModules) == "null":
		errs = append(errs, errors.New("target_modules is missing"))
	case json.Unmarshal(pc.TargetModules, &s) == nil:
		cfg.TargetRegexp = s
	case json.Unmarshal(pc.TargetModules, &list) == nil:
		cfg.TargetModules = list
	default:
		errs = append(errs, fmt.Errorf("target_modules %s is neither a string nor a list of strings", pc.TargetModules))
	}
	return cfg, errors.Join(errs...)
}
