package nn

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/wickml/wick/tensor"
)

// SaveCheckpoint writes a checkpoint of ck to path in the layout cmd/train
// writes (TrainCheckpointFormat), atomically (path holds either its old
// contents or the whole new file), so that a program with its own training
// loop resumes and samples as train does: LoadCheckpoint reads the model
// and its tokenizer back, ReadCheckpoint everything, including the
// optimizer's state, and train sample (--out_dir) samples from it.
//
//	ck := &nn.Checkpoint{Model: model, Tokenizer: tok, Iter: step, Optimizer: opt.StateDict()}
//	if err := nn.SaveCheckpoint("out/ckpt.safetensors", ck); err != nil { … }
//
// The model is ck.LM, or ck.Model when ck.LM is nil: a GPT or a
// Llama-family model. The file holds its state dict (StateDictOf) under its
// own names (nanoGPT's or Hugging Face's), ck.Optimizer's tensors (an
// optimizer's StateDict, may be nil) under OptimizerPrefix, and a MetaTrain
// record with the model's config (model_args for a GPT, llama_args for a
// Llama-family model), ck.Tokenizer, ck.Iter and ck.BestValLoss.
// ck.Metadata, when set, is a JSON object whose other fields the record
// keeps (a program's own resume state: its settings, generator states);
// its model_args, llama_args, tokenizer, iter and best_val_loss are
// replaced by ck's. ck.Adapter, when set, adds the LoRA adapters' tensors
// and config (see lora_checkpoint.go; it must not be merged). ck.Path,
// ck.Config, ck.LlamaConfig and ck.Tensors are not read.
//
// SaveCheckpoint panics with a *tensor.Error if ck or ck.Tokenizer is nil,
// or if both ck.LM and ck.Model are. It returns an error, and writes
// nothing, when the checkpoint would not read back: ck.Iter is negative,
// the model's config is invalid or beyond the MaxCheckpoint bounds, the
// tokenizer's vocabulary does not fit the model's, ck.Metadata is not a
// JSON object or an optimizer tensor is nil; and when the file cannot be
// written.
func SaveCheckpoint(path string, ck *Checkpoint) error {
	if ck == nil || (ck.LM == nil && ck.Model == nil) || ck.Tokenizer == nil {
		panic(&tensor.Error{Pkg: "nn", Op: "SaveCheckpoint", Msg: "the checkpoint, its model (LM or Model) and its Tokenizer must be non-nil"})
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("nn: SaveCheckpoint %s: "+format, append([]any{path}, args...)...)
	}
	var model Module
	var cfgKey, otherKey string
	var cfg any
	if ck.Iter < 0 {
		return fail("the step (Iter) is %d, want at least 0", ck.Iter)
	}
	lm := ck.LM
	if lm == nil {
		lm = ck.Model
	}
	switch m := lm.(type) {
	case *GPT:
		c := m.Config
		if err := c.Validate(); err != nil {
			return fail("%w", err)
		}
		if err := checkpointBounds(c); err != nil {
			return fail("%w", err)
		}
		if n := ck.Tokenizer.VocabSize(); n != c.VocabSize {
			return fail("the tokenizer has %d tokens, the model's vocab_size is %d (they must be equal)", n, c.VocabSize)
		}
		model, cfg, cfgKey, otherKey = m, c, "model_args", "llama_args"
	case *Llama:
		c := m.Config
		if err := c.Validate(); err != nil {
			return fail("%w", err)
		}
		if err := llamaCheckpointBounds(c); err != nil {
			return fail("%w", err)
		}
		if n := ck.Tokenizer.VocabSize(); n > c.VocabSize {
			return fail("the tokenizer has %d tokens, more than the model's vocab_size %d", n, c.VocabSize)
		}
		model, cfg, cfgKey, otherKey = m, c, "llama_args", "model_args"
	default:
		return fail("a %T is neither a GPT nor a Llama-family model", lm)
	}
	rec := map[string]json.RawMessage{}
	if len(ck.Metadata) > 0 {
		if err := json.Unmarshal(ck.Metadata, &rec); err != nil || rec == nil {
			return fail("Metadata is not a JSON object: %s", ck.Metadata)
		}
	}
	tok, err := ck.Tokenizer.MarshalJSON()
	if err != nil {
		return fail("tokenizer: %w", err)
	}
	delete(rec, otherKey)
	for key, v := range map[string]any{"iter": ck.Iter, "best_val_loss": ck.BestValLoss, cfgKey: cfg} {
		js, err := json.Marshal(v)
		if err != nil {
			return fail("%s: %w", key, err)
		}
		rec[key] = js
	}
	rec["tokenizer"] = tok
	if err := ck.adapterRecord(rec); err != nil {
		return fail("%w", err)
	}
	js, err := json.Marshal(rec)
	if err != nil {
		return fail("metadata: %w", err)
	}
	sd := StateDictOf(model)
	for _, name := range slices.Sorted(maps.Keys(ck.Optimizer)) {
		if ck.Optimizer[name] == nil {
			return fail("optimizer tensor %q is nil", name)
		}
		sd[OptimizerPrefix+name] = ck.Optimizer[name]
	}
	ck.adapterTensors(sd)
	return SaveStateDictFile(path, sd, map[string]string{MetaFormat: TrainCheckpointFormat, MetaTrain: string(js)})
}
