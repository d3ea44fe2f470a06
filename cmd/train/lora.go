package main

// Fine-tuning with LoRA adapters and activation checkpointing: --lora_rank
// freezes the pretrained model (--init_from) and trains low-rank adapters
// on the layers --lora_targets names, in PEFT's layout (nn.ApplyLoRA);
// each checkpoint also writes out_dir/adapter_config.json and
// adapter_model.safetensors, and with --merge_lora the merged model in the
// Hugging Face layout (out_dir/merged). train sample --adapter=PATH
// samples a pretrained model with an adapter.

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wickml/wick/internal/atomicfile"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// loraOptions are the fine-tuning flags (part of options, saved with it).
type loraOptions struct {
	LoRARank                int     `json:"lora_rank,omitempty"`
	LoRAAlpha               float64 `json:"lora_alpha,omitempty"`
	LoRADropout             float64 `json:"lora_dropout,omitempty"`
	LoRATargets             string  `json:"lora_targets,omitempty"`
	MergeLoRA               bool    `json:"merge_lora,omitempty"`
	ActivationCheckpointing bool    `json:"activation_checkpointing,omitempty"`
	// LoRABase is the pretrained model's directory (what --init_from
	// resolved to), kept so that a resumed run can copy its tokenizer
	// files next to the merged model.
	LoRABase string `json:"lora_base,omitempty"`
	// Adapter is train sample's --adapter (not a training option).
	Adapter string `json:"-"`
	// ckptUnread is set while a resumed run's flags are checked before its
	// checkpoint is read: --dtype=bfloat16 may then belong to the
	// checkpoint's LoRA run (checked again with its flags).
	ckptUnread bool
}

// mergedDir is the folder of out_dir that --merge_lora writes.
const mergedDir = "merged"

// loraFlags declares the fine-tuning flags and returns their --help group.
func loraFlags(fs *flag.FlagSet, o *options, sample bool) flagGroup {
	if sample {
		fs.StringVar(&o.Adapter, "adapter", o.Adapter, "a PEFT LoRA adapter to apply to --init_from's model: a folder with adapter_config.json and adapter_model.safetensors (as train --lora_rank writes into out_dir, or PEFT's save_pretrained), or one of those two files")
		return flagGroup{"adapter", []string{"adapter"}}
	}
	fs.IntVar(&o.LoRARank, "lora_rank", o.LoRARank, "rank of LoRA adapters (PEFT's r): with --init_from, freeze the pretrained model and train adapters on the --lora_targets layers only (with --dtype=bfloat16 or float16 the frozen model stays in 16 bits on the cpu, the adapters in float32); 0: train every weight")
	fs.Float64Var(&o.LoRAAlpha, "lora_alpha", o.LoRAAlpha, "LoRA scaling numerator: the adapters add (lora_alpha/lora_rank)·B·A to each weight")
	fs.Float64Var(&o.LoRADropout, "lora_dropout", o.LoRADropout, "dropout on the adapters' inputs while training, in [0, 1)")
	fs.StringVar(&o.LoRATargets, "lora_targets", o.LoRATargets, "comma-separated names of the Linear layers that get adapters, matched as PEFT's target_modules (a name or the end of a dotted name): q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj for Llama-family models, c_attn,c_proj,c_fc for GPT-2 (default: q_proj,v_proj; c_attn for GPT-2)")
	fs.BoolVar(&o.MergeLoRA, "merge_lora", o.MergeLoRA, "with --lora_rank, also write the model with the adapters merged into its weights to out_dir/merged, in the Hugging Face layout (config.json, model.safetensors, the tokenizer files), at every checkpoint (Llama-family models in theirs, GPT-2 in GPT-2's)")
	fs.BoolVar(&o.ActivationCheckpointing, "activation_checkpointing", o.ActivationCheckpointing, "recompute each block's activations in the backward pass instead of keeping them: less memory, one more forward pass per step, the same gradients")
	return flagGroup{"fine-tuning (LoRA adapters, activation checkpointing)", []string{"lora_rank", "lora_alpha", "lora_dropout", "lora_targets", "merge_lora", "activation_checkpointing"}}
}

// The Linear layers of each family that take adapters, by their last name
// (GPT-2's lm_head is tied to its embedding).
var (
	llamaLinears = []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"}
	gpt2Linears  = []string{"c_attn", "c_proj", "c_fc"}
)

// targets returns --lora_targets as a list, or the family's default.
func (o *options) targets(llama bool) []string {
	if strings.TrimSpace(o.LoRATargets) == "" {
		if llama {
			return []string{"q_proj", "v_proj"} // PEFT's default for Llama
		}
		return []string{"c_attn"} // PEFT's default for GPT-2
	}
	var out []string
	for _, t := range strings.Split(o.LoRATargets, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// validateLoRA checks the fine-tuning flags of a training run against the
// model (llama: a Llama-family model; tied: its head is the embedding),
// before anything is loaded: pretrained reports whether --init_from names
// a pretrained model (or the run resumes one that did).
func (o *options) validateLoRA(pretrained, llama, tied bool) error {
	if o.LoRARank == 0 {
		for _, f := range []string{"lora_alpha", "lora_dropout", "lora_targets", "merge_lora"} {
			if o.explicitFlags[f] {
				return fmt.Errorf("--%s needs --lora_rank=R (the adapters' rank)", f)
			}
		}
		return nil
	}
	switch {
	case o.LoRARank < 0:
		return fmt.Errorf("--lora_rank must be positive, got %d (0: no adapters, every weight trains)", o.LoRARank)
	case !pretrained:
		return errors.New("--lora_rank needs --init_from=DIR, the pretrained model whose frozen layers the adapters adapt")
	case !(o.LoRADropout >= 0 && o.LoRADropout < 1):
		return fmt.Errorf("--lora_dropout=%v is out of range [0, 1)", o.LoRADropout)
	case !(o.LoRAAlpha > 0) || o.LoRAAlpha > 1e6:
		return fmt.Errorf("--lora_alpha=%v is out of range (want a positive number)", o.LoRAAlpha)
	case o.LoRARank > 1<<16:
		return fmt.Errorf("--lora_rank=%d is out of range (at most 65536)", o.LoRARank)
	}
	known, family := gpt2Linears, "GPT-2"
	if llama {
		known, family = llamaLinears, "Llama-family"
	}
	var bad []string
	for _, t := range o.targets(llama) {
		last := t[strings.LastIndexByte(t, '.')+1:]
		if tied && last == "lm_head" {
			return fmt.Errorf("--lora_targets=%s: lm_head is tied to the embeddings in this model, so an adapter on it cannot be merged; leave it out", o.LoRATargets)
		}
		if !slices.Contains(known, last) {
			bad = append(bad, t)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("--lora_targets: %s match no layer of the %s model (its Linear layers: %s)", strings.Join(bad, ", "), family, strings.Join(known, ", "))
	}
	return nil
}

// loraOn16BitBase reports whether the run fine-tunes LoRA adapters on a
// base model kept in 16 bits (--lora_rank with --dtype=bfloat16 or
// float16): the frozen weights stay in --dtype, the adapters, activations
// and gradients are float32. Full training in 16 bits is another matter
// (validate refuses it).
func (o *options) loraOn16BitBase() bool {
	return (o.LoRARank > 0 || o.ckptUnread) && (o.Dtype == "bfloat16" || o.Dtype == "float16")
}

// loraBaseDType returns the dtype of the run's weights: --dtype's for a
// LoRA run on a 16-bit base, else float32. It refuses a 16-bit base off
// the cpu (16-bit tensors are the cpu's so far).
func loraBaseDType(o *options, dev tensor.Device) (tensor.DType, error) {
	if !o.loraOn16BitBase() {
		return tensor.Float32, nil
	}
	if dev != tensor.CPU {
		return 0, fmt.Errorf("--dtype=%s with --lora_rank runs on the cpu only so far (got --device=%s); use --dtype=float32 or --device=cpu", o.Dtype, dev)
	}
	return weightDType(o.Dtype)
}

// checkResumeLoRA refuses a resumed run whose adapter flags differ from
// the checkpoint's: the adapters' shapes and the optimizer's state follow
// them.
func checkResumeLoRA(saved, o *options, path string) error {
	for _, c := range []struct {
		name      string
		got, want any
	}{{"lora_rank", o.LoRARank, saved.LoRARank}, {"lora_alpha", o.LoRAAlpha, saved.LoRAAlpha},
		{"lora_targets", strings.Join(o.targets(true), ","), strings.Join(saved.targets(true), ",")}} {
		if c.got != c.want {
			return fmt.Errorf("--%s=%v does not match the checkpoint %s (%s=%v): a resumed run keeps the checkpoint's adapters", c.name, c.got, path, c.name, c.want)
		}
	}
	return nil
}

// prepareModel turns on activation checkpointing when asked and, with
// --lora_rank, freezes the model and attaches the adapters (their initial
// values from the global generator, seeded by --seed). It returns the
// adapters, or nil.
func prepareModel(o *options, model nn.CausalLM) (*nn.LoRA, error) {
	_, llama := model.(*nn.Llama)
	switch m := model.(type) {
	case *nn.Llama:
		m.ActivationCheckpointing = o.ActivationCheckpointing
	case *nn.GPT:
		m.ActivationCheckpointing = o.ActivationCheckpointing
	}
	if o.LoRARank == 0 {
		return nil, nil
	}
	lora, err := nn.ApplyLoRA(model, nn.LoRAConfig{R: o.LoRARank, Alpha: o.LoRAAlpha, Dropout: float32(o.LoRADropout),
		TargetModules: o.targets(llama), BaseModel: o.LoRABase})
	if err != nil {
		return nil, fmt.Errorf("--lora_targets: %s", strings.TrimPrefix(err.Error(), "nn: LoRA: "))
	}
	return lora, nil
}

// trainable returns what the optimizer trains: the adapters, or the model.
func trainable(model nn.Module, lora *nn.LoRA) nn.Module {
	if lora != nil {
		return lora
	}
	return model
}

// params returns the parameters the run trains.
func (t *trainer) params() []*tensor.Tensor { return trainable(t.model, t.lora).Parameters() }

// saveAdapter writes the adapters into out_dir in PEFT's layout and, with
// --merge_lora, the merged model into out_dir/merged, after the checkpoint.
func (t *trainer) saveAdapter() error {
	if t.lora == nil {
		return nil
	}
	if err := t.lora.SaveAdapter(t.o.OutDir); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "nn: "))
	}
	if !t.o.MergeLoRA {
		return nil
	}
	// a Llama-family model in its layout, GPT-2 in GPT-2's (Conv1D
	// weights transposed)
	hub, ok := t.model.(interface{ SavePretrained(dir string) error })
	if !ok {
		return fmt.Errorf("--merge_lora: a %T has no Hugging Face layout", t.model)
	}
	dir := filepath.Join(t.o.OutDir, mergedDir)
	t.lora.Merge()
	err := hub.SavePretrained(dir)
	t.lora.Unmerge()
	if err != nil {
		return fmt.Errorf("--merge_lora: %s", strings.TrimPrefix(err.Error(), "nn: "))
	}
	return copyTokenizerFiles(t.o, dir)
}

// tokenizerFiles are the files of a Hugging Face model directory that
// describe its tokenizer and generation, copied next to a merged model so
// that it loads on its own.
var tokenizerFiles = []string{"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "merges.txt", "generation_config.json"}

// copyTokenizerFiles copies the pretrained model's tokenizer files (from
// --tokenizer_dir, else --init_from's directory) into dir, atomically each.
func copyTokenizerFiles(o *options, dir string) error {
	src := o.TokenizerDir
	if src == "" {
		src = o.LoRABase
	}
	if src == "" {
		return nil
	}
	for _, name := range tokenizerFiles {
		b, err := os.ReadFile(filepath.Join(src, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("--merge_lora: copying the tokenizer: %v", err)
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, name), func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return fmt.Errorf("--merge_lora: %v", err)
		}
	}
	return nil
}

// adapterDir returns the folder --adapter=PATH names: PATH, or the folder
// of PATH when it is one of the adapter's two files.
func adapterDir(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("--adapter=%s: %v", path, pathless(err))
	}
	dir := path
	if !st.IsDir() {
		if b := filepath.Base(path); b != nn.AdapterConfigFile && b != nn.AdapterWeightsFile {
			return "", fmt.Errorf("--adapter=%s is neither a folder nor %s or %s", path, nn.AdapterConfigFile, nn.AdapterWeightsFile)
		}
		dir = filepath.Dir(path)
	}
	if _, err := os.Stat(filepath.Join(dir, nn.AdapterConfigFile)); err != nil {
		return "", fmt.Errorf("--adapter=%s: no %s there (a PEFT adapter folder holds it and %s)", path, nn.AdapterConfigFile, nn.AdapterWeightsFile)
	}
	return dir, nil
}

// checkSampleAdapter refuses --adapter without a pretrained --init_from.
func (o *options) checkSampleAdapter() error {
	if o.Adapter != "" && !o.pretrained() {
		return errors.New("--adapter needs --init_from=DIR, the pretrained model the adapter was trained on (a checkpoint of a LoRA run in out_dir holds its adapter already)")
	}
	return nil
}

// applySampleAdapter applies --adapter to the pretrained model.
func applySampleAdapter(o *options, model nn.CausalLM) error {
	if o.Adapter == "" {
		return nil
	}
	dir, err := adapterDir(o.Adapter)
	if err != nil {
		return err
	}
	if _, err := nn.LoadAdapter(dir, model); err != nil {
		return fmt.Errorf("--adapter=%s: %s", o.Adapter, strings.TrimPrefix(err.Error(), "nn: LoadAdapter: "))
	}
	return nil
}

// describeLoRA prints what the adapters train.
func (t *trainer) describeLoRA() {
	if t.lora == nil {
		if t.o.ActivationCheckpointing {
			fmt.Fprintln(t.out, "activation checkpointing: each block is recomputed in the backward pass")
		}
		return
	}
	c := t.lora.Config
	fmt.Fprintf(t.out, "lora: rank %d, alpha %g, dropout %g on %d layers (%s): %.3fM trainable parameters, the base model frozen",
		c.R, c.Alpha, c.Dropout, len(t.lora.Modules()), strings.Join(c.TargetModules, ","), float64(nn.NumParams(t.lora))/1e6)
	if t.o.ActivationCheckpointing {
		fmt.Fprint(t.out, "; activation checkpointing")
	}
	fmt.Fprintln(t.out)
}

// tiedHead reports whether the model's head is its embedding: always for
// GPT-2, per config.json for the Llama family.
func tiedHead(pre *pretrainedModel, meta *ckptMeta) bool {
	switch {
	case pre != nil && pre.llama != nil:
		return pre.llama.TieWordEmbeddings
	case meta != nil && meta.Llama != nil:
		return meta.Llama.TieWordEmbeddings
	}
	return true
}

// loadAdapterState copies a resumed run's adapters from its checkpoint.
func loadAdapterState(path string, lora *nn.LoRA, sd nn.StateDict) error {
	if lora == nil {
		return nil
	}
	if err := lora.LoadStateDict(sd.WithPrefix(nn.AdapterPrefix)); err != nil {
		return fmt.Errorf("checkpoint %s: its adapters do not match --lora_rank and --lora_targets: %s", path, strings.TrimPrefix(err.Error(), "nn: LoRA.LoadStateDict: "))
	}
	return nil
}

// adapterMetadata returns the part of a checkpoint's record that
// nn.Checkpoint.NewCausalLM reads to apply the adapters of a LoRA run.
func adapterMetadata(meta *ckptMeta) json.RawMessage {
	if len(meta.LoRAConfig) == 0 {
		return nil
	}
	js, _ := json.Marshal(map[string]json.RawMessage{"lora_config": meta.LoRAConfig}) // a valid RawMessage
	return js
}
