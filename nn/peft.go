package nn

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
	var targets any = l.Config.TargetModules
	if l.Config.TargetRegexp != "" {
		targets = l.Config.TargetRegexp
	}
	tm, err := json.Marshal(targets)
	if err != nil {
		return fmt.Errorf("nn: SaveAdapter: %w", err)
	}
	cfg := peftConfig{
		AlphaPattern: map[string]any{}, RankPattern: map[string]any{},
		BaseModel: l.Config.BaseModel, Bias: "none", InferenceMode: true, InitLoraWeights: true,
		LoraAlpha: l.Config.Alpha, LoraDropout: l.Config.Dropout, PeftType: "LORA", R: l.Config.R,
		TargetModules: tm, TaskType: "CAUSAL_LM",
	}
	js, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("nn: SaveAdapter: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("nn: SaveAdapter: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, AdapterConfigFile), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("nn: SaveAdapter: %w", err)
	}
	sd := StateDict{}
	for _, p := range l.NamedParameters() {
		sd[peftPrefix+p.Name] = p.Param.Detach().To(tensor.CPU).Contiguous()
	}
	if err := SaveStateDictFile(filepath.Join(dir, AdapterWeightsFile), sd, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("nn: SaveAdapter: %w", err)
	}
	return nil
}

// LoadAdapter reads a PEFT LoRA adapter from dir (adapter_config.json and
// adapter_model.safetensors, as SaveAdapter or PEFT's save_pretrained
// writes them) and applies it to m with ApplyLoRA, with the file's
// weights. The adapters start in evaluation mode (PEFT's inference_mode);
// call Train on the LoRA to fine-tune them further.
//
// It returns an error naming the file and what is wrong, and leaves m
// unchanged, for a config that is not LoRA or uses features Wick does not
// have (bias other than "none", DoRA, rank_pattern, alpha_pattern,
// rsLoRA, layers_to_transform, modules_to_save), target modules that match
// no Linear layer of m, a tensor for a module that is not a target, a
// target without its tensors, or tensors whose shapes do not fit the
// layer and r.
func LoadAdapter(dir string, m Module) (*LoRA, error) {
	cpath := filepath.Join(dir, AdapterConfigFile)
	raw, err := os.ReadFile(cpath)
	if err != nil {
		return nil, fmt.Errorf("nn: LoadAdapter: %w", err)
	}
	var pc peftConfig
	if err := json.Unmarshal(raw, &pc); err != nil {
		return nil, fmt.Errorf("nn: LoadAdapter: %s: %w", cpath, err)
	}
	cfg, err := pc.loraConfig()
	if err != nil {
		return nil, fmt.Errorf("nn: LoadAdapter: %s: %w", cpath, err)
	}
	wpath := filepath.Join(dir, AdapterWeightsFile)
	sd, _, err := LoadStateDictFile(wpath)
	if err != nil {
		return nil, fmt.Errorf("nn: LoadAdapter: %w", err)
	}
	// check the tensors against the layers before touching m
	re, err := cfg.validate()
	if err != nil {
		return nil, fmt.Errorf("nn: LoadAdapter: %s: %w", cpath, err)
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
	for _, name := range sd.Names() {
		rest, ok := strings.CutPrefix(name, peftPrefix)
		mod, kind, ok2 := strings.Cut(rest, ".lora_")
		if !ok || !ok2 || (kind != "A.weight" && kind != "B.weight") {
			return nil, fmt.Errorf("nn: LoadAdapter: %s: tensor %q is not a LoRA weight (want %sNAME.lora_A.weight or .lora_B.weight)", wpath, name, peftPrefix)
		}
		if layers[mod] == nil {
			return nil, fmt.Errorf("nn: LoadAdapter: %s: tensor %q is for module %q, which is not a targeted Linear layer of the model", wpath, name, mod)
		}
	}
	for _, name := range order {
		lin := layers[name]
		for _, w := range []struct {
			kind  string
			shape []int
		}{{"A", []int{cfg.R, lin.In}}, {"B", []int{lin.Out, cfg.R}}} {
			key := peftPrefix + name + ".lora_" + w.kind + ".weight"
			t := sd[key]
			switch {
			case t == nil:
				return nil, fmt.Errorf("nn: LoadAdapter: %s: target module %q has no tensor %q", wpath, name, key)
			case t.DType() != tensor.Float32:
				return nil, fmt.Errorf("nn: LoadAdapter: %s: tensor %q is %s; want float32", wpath, key, t.DType())
			case !slices.Equal(t.Shape(), w.shape):
				return nil, fmt.Errorf("nn: LoadAdapter: %s: tensor %q has shape %v; want %v (r=%d, layer %d→%d)", wpath, key, t.Shape(), w.shape, cfg.R, lin.In, lin.Out)
			}
		}
	}
	l, err := ApplyLoRA(m, cfg)
	if err != nil {
		return nil, fmt.Errorf("nn: LoadAdapter: %w", err)
	}
	for _, name := range l.names {
		a := l.layers[name].lora
		dev := a.a.Device()
		a.a = sd[peftPrefix+name+".lora_A.weight"].To(dev).Contiguous().Detach().RequiresGrad()
		a.b = sd[peftPrefix+name+".lora_B.weight"].To(dev).Contiguous().Detach().RequiresGrad()
	}
	l.Eval()
	return l, nil
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
