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
// The file holds ck.Model's state dict (StateDictOf) under nanoGPT's names,
// ck.Optimizer's tensors (an optimizer's StateDict, may be nil) under
// OptimizerPrefix, and a MetaTrain record with ck.Model.Config as
// model_args, ck.Tokenizer, ck.Iter and ck.BestValLoss. ck.Metadata, when
// set, is a JSON object whose other fields the record keeps (a program's
// own resume state: its settings, generator states); its model_args,
// tokenizer, iter and best_val_loss are replaced by ck's. ck.Path,
// ck.Config and ck.Tensors are not read.
//
// SaveCheckpoint panics with a *tensor.Error if ck, ck.Model or
// ck.Tokenizer is nil. It returns an error, and writes nothing, when the
// checkpoint would not read back: ck.Iter is negative, the model's config
// is invalid or beyond the MaxCheckpoint bounds, the tokenizer's vocabulary
// is not the model's, ck.Metadata is not a JSON object or an optimizer
// tensor is nil; and when the file cannot be written.
func SaveCheckpoint(path string, ck *Checkpoint) error {
	if ck == nil || ck.Model == nil || ck.Tokenizer == nil {
		panic(&tensor.Error{Pkg: "nn", Op: "SaveCheckpoint", Msg: "the checkpoint, its Model and its Tokenizer must be non-nil"})
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("nn: SaveCheckpoint %s: "+format, append([]any{path}, args...)...)
	}
	cfg := ck.Model.Config
	if ck.Iter < 0 {
		return fail("the step (Iter) is %d, want at least 0", ck.Iter)
	}
	if err := cfg.Validate(); err != nil {
		return fail("%w", err)
	}
	if err := checkpointBounds(cfg); err != nil {
		return fail("%w", err)
	}
	if n := ck.Tokenizer.VocabSize(); n != cfg.VocabSize {
		return fail("the tokenizer has %d tokens, the model's vocab_size is %d (they must be equal)", n, cfg.VocabSize)
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
	for key, v := range map[string]any{"iter": ck.Iter, "best_val_loss": ck.BestValLoss, "model_args": cfg} {
		js, err := json.Marshal(v)
		if err != nil {
			return fail("%s: %w", key, err)
		}
		rec[key] = js
	}
	rec["tokenizer"] = tok
	js, err := json.Marshal(rec)
	if err != nil {
		return fail("metadata: %w", err)
	}
	sd := StateDictOf(ck.Model)
	for _, name := range slices.Sorted(maps.Keys(ck.Optimizer)) {
		if ck.Optimizer[name] == nil {
			return fail("optimizer tensor %q is nil", name)
		}
		sd[OptimizerPrefix+name] = ck.Optimizer[name]
	}
	return SaveStateDictFile(path, sd, map[string]string{MetaFormat: TrainCheckpointFormat, MetaTrain: string(js)})
}
