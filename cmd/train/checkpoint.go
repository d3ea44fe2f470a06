package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// ckptName is the checkpoint's file name inside out_dir.
const ckptName = "ckpt.safetensors"

// The checkpoint's layout is nn's (nn.TrainCheckpointFormat): the model's
// tensors carry nanoGPT's names unprefixed, so nn.LoadFile and PyTorch read
// the model from the same file, and the optimizer's start with
// nn.OptimizerPrefix (optimizer.state.N.exp_avg, …). nn.ReadCheckpoint
// reads and checks the model's config and the tokenizer; the other fields
// of ckptMeta are train's own.

// ckptMeta is everything in a checkpoint besides the tensors.
type ckptMeta struct {
	Iter       int             `json:"iter"`                 // optimizer steps taken
	BestVal    *float64        `json:"best_val_loss"`        // nil before the first evaluation
	Model      nn.GPTConfig    `json:"-"`                    // a GPT's config (ModelArgs in the file)
	ModelArgs  *nn.GPTConfig   `json:"model_args,omitempty"` // Model, for a GPT
	Llama      *nn.LlamaConfig `json:"llama_args,omitempty"` // a Llama-family model's config
	Options    *options        `json:"config"`               // the run's flags
	Tokenizer  json.RawMessage `json:"tokenizer"`            // written by nn.SaveCheckpoint from tok
	RNGGlobal  []byte          `json:"rng_global"`           // tensor.GlobalGenerator state (dropout)
	RNGSampler []byte          `json:"rng_sampler"`          // the training batch sampler's state
	// RNGSamplers holds every micro-batch slot's sampler state, slot 0
	// first, when gradient_accumulation_steps > 1 (see dist.go).
	RNGSamplers [][]byte   `json:"rng_samplers,omitempty"`
	Data        corpusInfo `json:"data"`
	// LoRAConfig is the adapters' PEFT config that nn.SaveCheckpoint
	// writes for a run with --lora_rank (read back for sampling).
	LoRAConfig json.RawMessage `json:"lora_config,omitempty"`
	// Scaler is float16's loss scaler state (optim.GradScaler), restored
	// on --resume; absent for the other dtypes.
	Scaler *scalerState `json:"scaler,omitempty"`

	// tok is Tokenizer: the tokenizer saveCheckpoint writes, the one
	// readCheckpoint read.
	tok tokenizer.Tokenizer
}

// scalerState is a GradScaler's state as PyTorch's state_dict names it.
type scalerState struct {
	Scale         float32 `json:"scale"`
	GrowthTracker int     `json:"growth_tracker"`
}

// corpusInfo identifies the corpus a run trained on.
type corpusInfo struct {
	Name   string `json:"name"`
	Bytes  int    `json:"bytes"`
	CRC32C uint32 `json:"crc32c"`
}

// saveCheckpoint writes the model (a GPT or a Llama-family model), the
// optimizer's state and meta (with meta.tok, its tokenizer) to path
// atomically, through nn.SaveCheckpoint, which writes the model's config,
// the tokenizer and the step from model and meta.
func saveCheckpoint(path string, model nn.CausalLM, adapter *nn.LoRA, opt optim.Optimizer, meta *ckptMeta) error {
	js, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	ck := &nn.Checkpoint{LM: model, Adapter: adapter, Tokenizer: meta.tok, Iter: meta.Iter, BestValLoss: meta.BestVal, Metadata: js, Optimizer: opt.StateDict()}
	if err := nn.SaveCheckpoint(path, ck); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "nn: "))
	}
	return nil
}

// readCheckpoint reads the checkpoint at path, for resuming: all its
// tensors (the model's and the optimizer's, each checked against the
// model's config by nn.ReadCheckpoint before any is read) and its meta,
// checked by nn.ReadCheckpoint (the model's config and bounds, the
// tokenizer) and here (the run's flags).
func readCheckpoint(path string) (nn.StateDict, *ckptMeta, error) {
	ck, meta, err := openCheckpoint(path, nn.ReadCheckpoint)
	if err != nil {
		return nil, nil, err
	}
	return ck.Tensors, meta, nil
}

// loadCheckpoint is readCheckpoint for sampling: the checkpoint's model
// built by nn.LoadCheckpoint, which leaves the optimizer's state unread
// (and draws no random numbers, so that the tokens drawn from --seed are
// those a program gets from nn.LoadCheckpoint, tensor.ManualSeed(seed) and
// Generate).
func loadCheckpoint(path string) (*nn.Checkpoint, *ckptMeta, error) {
	return openCheckpoint(path, nn.LoadCheckpoint)
}

// openCheckpoint reads the checkpoint at path with read (nn.ReadCheckpoint
// or nn.LoadCheckpoint) and checks train's record in it.
func openCheckpoint(path string, read func(string) (*nn.Checkpoint, error)) (*nn.Checkpoint, *ckptMeta, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := nanoGPTCheckpointError(filepath.Dir(path)); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("no checkpoint at %s to resume or sample from (train without --resume first, or set --out_dir)", path)
	}
	ck, err := read(path)
	if err != nil {
		return nil, nil, errors.New(strings.TrimPrefix(err.Error(), "nn: "))
	}
	var meta ckptMeta
	if err := json.Unmarshal(ck.Metadata, &meta); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s is corrupt: metadata: %v", path, err)
	}
	if meta.Options == nil {
		return nil, nil, fmt.Errorf("checkpoint %s is corrupt: metadata lacks the config", path)
	}
	if err := meta.checkBounds(); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s is corrupt: %v", path, err)
	}
	meta.Model, meta.Llama, meta.tok = ck.Config, ck.LlamaConfig, ck.Tokenizer
	return ck, &meta, nil
}

// applyMaxMemory makes --max_memory, when given, the library's allocation
// limit (tensor.SetMaxAllocBytes) before a checkpoint is read: nn's
// loaders check the model's size from its config, and every tensor of the
// file, against it before they allocate, and refuse with one line what
// would not fit.
func applyMaxMemory(o *options) {
	if o.MaxMemory > 0 {
		tensor.SetMaxAllocBytes(int64(o.MaxMemory))
	}
}

// readCheckpointStoppable is readCheckpoint that the first SIGINT or
// SIGTERM stops, even while the read blocks (a FIFO, a slow file).
func readCheckpointStoppable(ctx context.Context, path string) (nn.StateDict, *ckptMeta, error) {
	type both struct {
		sd   nn.StateDict
		meta *ckptMeta
	}
	r, err := stoppable(ctx, "reading the checkpoint stopped", func() (both, error) {
		sd, meta, err := readCheckpoint(path)
		return both{sd, meta}, err
	})
	return r.sd, r.meta, err
}

// loadCheckpointStoppable is loadCheckpoint that the first SIGINT or
// SIGTERM stops, even while the read blocks.
func loadCheckpointStoppable(ctx context.Context, path string) (*nn.Checkpoint, *ckptMeta, error) {
	type both struct {
		ck   *nn.Checkpoint
		meta *ckptMeta
	}
	r, err := stoppable(ctx, "reading the checkpoint stopped", func() (both, error) {
		ck, meta, err := loadCheckpoint(path)
		return both{ck, meta}, err
	})
	return r.ck, r.meta, err
}

// loadModelState copies the checkpoint's model tensors, read on the CPU,
// into model, wherever it lives (Tensor.CopyFrom moves them).
func loadModelState(path string, model nn.Module, sd nn.StateDict) error {
	if err := nn.LoadStateDict(model, sd.WithoutPrefix(nn.OptimizerPrefix).WithoutPrefix(nn.AdapterPrefix)); err != nil {
		return fmt.Errorf("checkpoint %s does not match its model config: %v", path, err)
	}
	return nil
}

// ckptPath returns out_dir/ckpt.safetensors.
func ckptPath(outDir string) string { return filepath.Join(outDir, ckptName) }
