package main

import (
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
)

// ckptName is the checkpoint's file name inside out_dir.
const ckptName = "ckpt.safetensors"

// ckptFormat identifies the metadata layout below.
const ckptFormat = "wick-train/1"

// Metadata keys of the checkpoint file.
const (
	metaFormat = "format"
	metaState  = "wick_train"
)

// optimPrefix starts the names of the optimizer's tensors in the checkpoint
// (optimizer.state.N.exp_avg, …); the model's tensors carry nanoGPT's names
// unprefixed, so nn.LoadFile and PyTorch read the model from the same file.
const optimPrefix = "optimizer."

// ckptMeta is everything in a checkpoint besides the tensors.
type ckptMeta struct {
	Iter       int             `json:"iter"`          // optimizer steps taken
	BestVal    *float64        `json:"best_val_loss"` // nil before the first evaluation
	Model      nn.GPTConfig    `json:"model_args"`
	Options    *options        `json:"config"` // the run's flags
	Tokenizer  json.RawMessage `json:"tokenizer"`
	RNGGlobal  []byte          `json:"rng_global"`  // tensor.GlobalGenerator state (dropout)
	RNGSampler []byte          `json:"rng_sampler"` // the training batch sampler's state
	// RNGSamplers holds every micro-batch slot's sampler state, slot 0
	// first, when gradient_accumulation_steps > 1 (see dist.go).
	RNGSamplers [][]byte   `json:"rng_samplers,omitempty"`
	Data        corpusInfo `json:"data"`
}

// corpusInfo identifies the corpus a run trained on.
type corpusInfo struct {
	Name   string `json:"name"`
	Bytes  int    `json:"bytes"`
	CRC32C uint32 `json:"crc32c"`
}

// saveCheckpoint writes the model, optimizer and meta to path atomically.
func saveCheckpoint(path string, model *nn.GPT, opt optim.Optimizer, meta *ckptMeta) error {
	sd := nn.StateDictOf(model)
	for k, t := range opt.StateDict() {
		sd[optimPrefix+k] = t
	}
	js, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nn.SaveStateDictFile(path, sd, map[string]string{metaFormat: ckptFormat, metaState: string(js)})
}

// readCheckpoint reads the checkpoint at path: its tensors and its meta.
func readCheckpoint(path string) (nn.StateDict, *ckptMeta, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("no checkpoint at %s to resume or sample from (train without --resume first, or set --out_dir)", path)
	}
	var sd nn.StateDict
	var md map[string]string
	var err error
	if perr := tensor.Catch(func() { sd, md, err = nn.LoadStateDictFile(path) }); perr != nil {
		err = perr
	}
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s is corrupt or unreadable: %s", path, strings.TrimPrefix(err.Error(), "nn: "))
	}
	if md[metaFormat] != ckptFormat {
		return nil, nil, fmt.Errorf("checkpoint %s was not written by train (metadata format %q, want %q)", path, md[metaFormat], ckptFormat)
	}
	var meta ckptMeta
	if err := json.Unmarshal([]byte(md[metaState]), &meta); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s is corrupt: metadata: %v", path, err)
	}
	if meta.Options == nil || len(meta.Tokenizer) == 0 || meta.Iter < 0 {
		return nil, nil, fmt.Errorf("checkpoint %s is corrupt: metadata lacks the config, tokenizer or step", path)
	}
	if err := meta.Model.Validate(); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s is corrupt: %v", path, err)
	}
	if err := meta.checkBounds(); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s is corrupt: %v", path, err)
	}
	return sd, &meta, nil
}

// loadModelState copies the checkpoint's model tensors, read on the CPU,
// into model, wherever it lives (Tensor.CopyFrom moves them).
func loadModelState(path string, model *nn.GPT, sd nn.StateDict) error {
	if err := nn.LoadStateDict(model, sd.WithoutPrefix(optimPrefix)); err != nil {
		return fmt.Errorf("checkpoint %s does not match its model config: %v", path, err)
	}
	return nil
}

// ckptPath returns out_dir/ckpt.safetensors.
func ckptPath(outDir string) string { return filepath.Join(outDir, ckptName) }
