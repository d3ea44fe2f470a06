package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/wickml/wick/internal/data"
	"github.com/wickml/wick/internal/sampling"
	"github.com/wickml/wick/tensor"
)

// options holds every flag of the train and sample commands. Names follow
// nanoGPT's train.py and sample.py.
type options struct {
	// I/O
	OutDir        string
	Data          string
	Dataset       string
	DataMaxBytes  int
	Tokenizer     string
	TokenizerDir  string
	VocabSize     int
	EvalInterval  int
	LogInterval   int
	EvalIters     int
	EvalOnly      bool
	AlwaysSave    bool
	InitFrom      string
	Resume        bool
	Device        string
	Dtype         string
	Compile       bool
	Seed          uint64
	Progress      string
	NumSamples    int
	NumTokens     int
	Prompt        string
	Temperature   float64
	TopK          int
	GradAccum     int
	BatchSize     int
	BlockSize     int
	NLayer        int
	NHead         int
	NEmbd         int
	Dropout       float64
	Bias          bool
	LearningRate  float64
	MaxIters      int
	WeightDecay   float64
	Beta1, Beta2  float64
	GradClip      float64
	DecayLR       bool
	WarmupIters   int
	LRDecayIters  int
	MinLR         float64
	WandbLog      bool
	WandbProject  string
	WandbRunName  string
	MaxMemory     byteSize        `json:"-"` // the machine's, not the run's: not saved
	loraOptions                   // fine-tuning with adapters (lora.go)
	explicitFlags map[string]bool // the flags given on the command line or in config files
	promptRead    bool            // Prompt holds the text of a --start=FILE:path
	initNotes     []string        // what --init_from overrode, for notes
	binDir        string          // the folder of nanoGPT's train.bin and val.bin that --dataset names
}

// defaultOptions returns the defaults, sized so that `go run ./cmd/train`
// finishes in about two minutes on two cores (1500 steps of a 2-layer,
// 96-wide model at about 75 ms each) and reaches a validation loss near
// 1.9 on the Go sources, enough for Go-looking samples.
func defaultOptions() *options {
	return &options{
		OutDir: "out", DataMaxBytes: 2 << 20, Tokenizer: "char", VocabSize: 512,
		EvalInterval: 250, LogInterval: 10, EvalIters: 10, AlwaysSave: false, InitFrom: "scratch",
		Device: "auto", Dtype: "float32", Compile: false, Seed: 1337, Progress: "auto",
		NumSamples: 1, NumTokens: 300, Prompt: "", Temperature: 0.8, TopK: 200,
		GradAccum: 1, BatchSize: 16, BlockSize: 64, NLayer: 2, NHead: 4, NEmbd: 96,
		Dropout: 0.0, Bias: false, LearningRate: 3e-3, MaxIters: 1500, WeightDecay: 0.1,
		Beta1: 0.9, Beta2: 0.99, GradClip: 1.0, DecayLR: true, WarmupIters: 50,
		LRDecayIters: 0, MinLR: 3e-4, loraOptions: loraOptions{LoRAAlpha: 16},
	}
}

// flagGroup is a heading in --help.
type flagGroup struct {
	title string
	names []string
}

// newFlagSet declares the flags of the train command (sample=false) or of
// the sample command into o, returning the set and the groups for --help.
func newFlagSet(o *options, sample bool) (*flag.FlagSet, []flagGroup) {
	name := "train"
	if sample {
		name = "train sample"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var groups []flagGroup
	group := func(title string, names ...string) { groups = append(groups, flagGroup{title, names}) }

	fs.StringVar(&o.OutDir, "out_dir", o.OutDir, "directory for the checkpoint (ckpt.safetensors), log.jsonl, loss.svg/loss.png and sample.txt; one run at a time (it holds out_dir/train.lock), and a fresh run moves an earlier run's log.jsonl to log.prev.jsonl")
	fs.StringVar(&o.OutDir, "out", o.OutDir, "alias of --out_dir")
	fs.StringVar(&o.Device, "device", o.Device, "auto, cpu, cuda or cuda:N (auto: the GPU when the binary is built with -tags cuda and one is present, else cpu)")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "random seed of the model initialisation, dropout, batch sampling and text generation")
	fs.IntVar(&o.NumSamples, "num_samples", o.NumSamples, "number of texts to generate")
	fs.IntVar(&o.NumTokens, "num_tokens", o.NumTokens, "tokens to generate per text (alias --max_new_tokens)")
	fs.IntVar(&o.NumTokens, "max_new_tokens", o.NumTokens, "alias of --num_tokens (nanoGPT's sample.py name)")
	fs.StringVar(&o.Prompt, "prompt", o.Prompt, `text the generated text continues (alias --start); FILE:path reads it from a file; empty: a newline, like nanoGPT's sample.py`)
	fs.StringVar(&o.Prompt, "start", o.Prompt, "alias of --prompt (nanoGPT's sample.py name)")
	fs.Float64Var(&o.Temperature, "temperature", o.Temperature, "sampling temperature: < 1 is more conservative, > 1 more random; 0 is greedy (the most likely token); else from 0.001 to 100")
	fs.IntVar(&o.TopK, "top_k", o.TopK, "sample only among the top_k most likely tokens (0: all)")
	dtypeUsage := `float32, bfloat16 or float16: mixed precision like torch.autocast(device, dtype=...) around the forward pass (the matrix products on 16-bit operands with float32 sums, on cuda cublasGemmEx with float32 compute; the rest, the weights, gradients and AdamW state in float32; checkpoints record it and --resume keeps it). bfloat16 trains on the cpu and on cuda (nanoGPT turns autocast off on the cpu; Wick does not). float16 trains on cuda with dynamic loss scaling like torch.cuda.amp.GradScaler (scale 65536, halved after a step with inf/NaN gradients, which is skipped, doubled after 2000 steps without; saved in the checkpoint) and is refused on the cpu. With --lora_rank, bfloat16 or float16 is the frozen base's dtype instead (see --lora_rank)`
	if sample {
		dtypeUsage = "dtype of the model's weights: float32, bfloat16 or float16 (16-bit weights on the cpu: half the memory, activations in float32; a BF16/F16 --init_from file is kept as it is)"
	}
	fs.StringVar(&o.Dtype, "dtype", o.Dtype, dtypeUsage)
	initUsage := "scratch, resume (nanoGPT's name for --resume), or a pretrained model to fine-tune (config.json's model_type gpt2, llama, mistral, qwen2 or qwen3): a Hugging Face model directory (config.json, model.safetensors) or a hub name (gpt2, gpt2-medium, gpt2-large, gpt2-xl, or owner/name) found in the Hugging Face cache"
	if sample {
		if o.InitFrom == "scratch" { // nanoGPT's sample.py default
			o.InitFrom = "resume"
		}
		initUsage = "resume (out_dir's checkpoint), or a pretrained model to sample from (gpt2, llama, mistral, qwen2, qwen3; stopping at its config's eos_token_id): a Hugging Face model directory or a hub name (gpt2, …, or owner/name) found in the Hugging Face cache"
	}
	fs.StringVar(&o.InitFrom, "init_from", o.InitFrom, initUsage)
	fs.StringVar(&o.TokenizerDir, "tokenizer_dir", o.TokenizerDir, "folder of GPT-2's tokenizer files for --tokenizer=gpt2: vocab.json and merges.txt, or encoder.json and vocab.bpe (default: the --init_from directory, else the vocabulary built into Wick)")
	fs.Var(&o.MaxMemory, "max_memory", "memory the run may use, such as 8GiB or 512MiB (auto: MemAvailable from /proc/meminfo); a run estimated to need more stops before allocating")
	loraGroup := loraFlags(fs, o, sample)
	if sample {
		group("checkpoint and device", "init_from", "tokenizer_dir", "out_dir", "out", "device", "seed", "max_memory")
		group(loraGroup.title, loraGroup.names...)
		group("generation", "prompt", "start", "num_tokens", "max_new_tokens", "num_samples", "temperature", "top_k", "dtype")
		return fs, groups
	}

	fs.Var(&corpusFlag{o, false}, "data", "UTF-8 text file to train on, or a pipe such as <(zcat corpus.gz) (empty: --dataset, else Go standard library sources under GOROOT/src)")
	fs.Var(&corpusFlag{o, true}, "dataset", "nanoGPT's dataset name: trains on data/NAME/train.bin and val.bin as nanoGPT's prepare.py writes them (uint16 ids; the char vocabulary of meta.pkl, or GPT-2's tokenizer without one), else on data/NAME/input.txt (NAME may also be a folder, or a file); the later of --data and --dataset applies")
	fs.IntVar(&o.DataMaxBytes, "data_max_bytes", o.DataMaxBytes, "size bound of the default corpus (without --data), in bytes")
	fs.StringVar(&o.Tokenizer, "tokenizer", o.Tokenizer, "char (one token per character), bpe (byte-level BPE trained on the corpus) or gpt2 (GPT-2's: read from --tokenizer_dir or the --init_from directory, else the vocabulary built into Wick; the default with a pretrained --init_from)")
	fs.IntVar(&o.VocabSize, "vocab_size", o.VocabSize, "vocabulary size of the bpe tokenizer (256 bytes + merges); ignored by char")
	fs.BoolVar(&o.Resume, "resume", o.Resume, "continue the run saved in out_dir/ckpt.safetensors (same as --init_from=resume)")
	fs.IntVar(&o.EvalInterval, "eval_interval", o.EvalInterval, "evaluate train/val loss every this many iterations (and at the end)")
	fs.IntVar(&o.EvalIters, "eval_iters", o.EvalIters, "batches per split in each evaluation")
	fs.IntVar(&o.LogInterval, "log_interval", o.LogInterval, "log the training loss every this many iterations")
	fs.BoolVar(&o.EvalOnly, "eval_only", o.EvalOnly, "evaluate once and exit (with --resume: the checkpoint's model)")
	fs.BoolVar(&o.AlwaysSave, "always_save_checkpoint", o.AlwaysSave, "save a checkpoint at every evaluation, not only when the val loss improves")
	fs.StringVar(&o.Progress, "progress", o.Progress, "auto (a progress bar when stdout is a terminal and no launcher such as mpirun or srun started the process), bar, or plain (log lines); with several ranks only rank 0 reports")
	fs.BoolVar(&o.Compile, "compile", o.Compile, "accepted for nanoGPT compatibility; has no effect")
	fs.BoolVar(&o.WandbLog, "wandb_log", o.WandbLog, "accepted for nanoGPT compatibility: Wick does not log to Weights & Biases; the log goes to out_dir/log.jsonl")
	fs.StringVar(&o.WandbProject, "wandb_project", o.WandbProject, "accepted for nanoGPT compatibility; unused")
	fs.StringVar(&o.WandbRunName, "wandb_run_name", o.WandbRunName, "accepted for nanoGPT compatibility; unused")

	fs.IntVar(&o.NLayer, "n_layer", o.NLayer, "transformer blocks")
	fs.IntVar(&o.NHead, "n_head", o.NHead, "attention heads (must divide n_embd)")
	fs.IntVar(&o.NEmbd, "n_embd", o.NEmbd, "embedding width")
	fs.IntVar(&o.BlockSize, "block_size", o.BlockSize, "context length in tokens")
	fs.Float64Var(&o.Dropout, "dropout", o.Dropout, "dropout probability while training, in [0, 1)")
	fs.BoolVar(&o.Bias, "bias", o.Bias, "biases in Linear and LayerNorm layers")

	fs.IntVar(&o.BatchSize, "batch_size", o.BatchSize, "sequences per micro-batch")
	fs.IntVar(&o.GradAccum, "gradient_accumulation_steps", o.GradAccum, "micro-batches per optimizer step (nanoGPT's default is 40 for GPT-2; its shakespeare recipe uses 1)")
	fs.IntVar(&o.MaxIters, "max_iters", o.MaxIters, "optimizer steps in all")
	fs.Float64Var(&o.LearningRate, "learning_rate", o.LearningRate, "peak learning rate")
	fs.Float64Var(&o.MinLR, "min_lr", o.MinLR, "learning rate at the end of the cosine decay")
	fs.IntVar(&o.WarmupIters, "warmup_iters", o.WarmupIters, "iterations of linear warmup")
	fs.IntVar(&o.LRDecayIters, "lr_decay_iters", o.LRDecayIters, "iteration where the cosine decay reaches min_lr (0: max_iters)")
	fs.BoolVar(&o.DecayLR, "decay_lr", o.DecayLR, "warmup + cosine decay of the learning rate (false: constant learning_rate)")
	fs.Float64Var(&o.WeightDecay, "weight_decay", o.WeightDecay, "AdamW weight decay of the ≥2-D weights (biases, LayerNorm: none)")
	fs.Float64Var(&o.Beta1, "beta1", o.Beta1, "AdamW beta1")
	fs.Float64Var(&o.Beta2, "beta2", o.Beta2, "AdamW beta2")
	fs.Float64Var(&o.GradClip, "grad_clip", o.GradClip, "clip the gradient norm to this value (0: no clipping)")

	group("data and tokenizer", "data", "dataset", "data_max_bytes", "tokenizer", "tokenizer_dir", "vocab_size")
	group("output, evaluation and logging", "out_dir", "out", "eval_interval", "eval_iters", "log_interval", "eval_only", "always_save_checkpoint", "init_from", "resume", "progress", "wandb_log", "wandb_project", "wandb_run_name")
	group("model", "n_layer", "n_head", "n_embd", "block_size", "dropout", "bias")
	group(loraGroup.title, loraGroup.names...)
	group("optimizer (AdamW) and learning-rate schedule", "batch_size", "gradient_accumulation_steps", "max_iters", "learning_rate", "min_lr", "warmup_iters", "lr_decay_iters", "decay_lr", "weight_decay", "beta1", "beta2", "grad_clip")
	group("system", "device", "dtype", "compile", "seed", "max_memory")
	group("sample printed at the end (see also: train sample --help)", "prompt", "start", "num_tokens", "max_new_tokens", "num_samples", "temperature", "top_k")
	return fs, groups
}

// usage writes --help: every flag with its default, by group.
func usage(w io.Writer, fs *flag.FlagSet, groups []flagGroup, sample bool) {
	if sample {
		fmt.Fprint(w, `Usage: train sample [config.py ...] [flags]

Generates text from the checkpoint out_dir/ckpt.safetensors written by train,
or from a pretrained GPT-2 (--init_from=DIR or a hub name such as gpt2).
A nanoGPT config file (name = value lines) sets the flags below; keys of
the train command in it are skipped, as nanoGPT's sample.py skips them.

Exit status: 0 on success; 1 on an error, named in one line on stderr;
130 after SIGINT (Ctrl-C) and 143 after SIGTERM, which stop it within a
second.

`)
	} else {
		fmt.Fprint(w, `Usage: train [config.py ...] [flags]
       train sample [flags]   (generate text from a checkpoint; train sample --help)

Trains a GPT-style causal language model (nanoGPT's architecture and
train.py flags) on a text file (--data), on a nanoGPT dataset (--dataset:
data/NAME's train.bin and val.bin from nanoGPT's prepare.py, or its
input.txt; the repository ships data/shakespeare_char/input.txt), or on Go
standard-library sources when neither is given, then prints generated
text. Flags are written --name=value
or --name value; booleans also as --name (true) or --name=false.
A nanoGPT config file such as config/train_shakespeare_char.py (Python
name = value lines with the flag names) applies where it stands among the
arguments, so flags after it override it, as in nanoGPT.

Exit status: 0 on success; 1 on an error, named in one line on stderr;
130 after SIGINT (Ctrl-C) and 143 after SIGTERM. Training saves a
checkpoint before it exits on either signal; tokenizer training and the
final sample stop within a second. A second Ctrl-C exits at once.

`)
	}
	for _, g := range groups {
		fmt.Fprintf(w, "%s:\n", g.title)
		for _, n := range g.names {
			f := fs.Lookup(n)
			def := f.DefValue
			if def == "" {
				def = `""`
			}
			fmt.Fprintf(w, "  --%s=%s\n        %s\n", n, def, f.Usage)
		}
		fmt.Fprintln(w)
	}
}

// parseFlags parses args into o, in order, and records which flags were
// given. An argument that is not a flag and has no "=" names a nanoGPT
// config file, applied where it stands (configurator.py's rule), so the
// flags after it override it. The sample command skips the train
// command's keys in a config file.
func parseFlags(fs *flag.FlagSet, o *options, args []string) error {
	var ignore func(string) bool
	if fs.Lookup("data") == nil { // the sample command
		train, _ := newFlagSet(defaultOptions(), false)
		ignore = func(name string) bool { return train.Lookup(name) != nil }
	}
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%s (see --help)", flagError(err))
		}
		if fs.NArg() == 0 {
			break
		}
		arg := fs.Arg(0)
		if strings.Contains(arg, "=") || arg == "" {
			return fmt.Errorf("unexpected argument %q (flags are written --name=value; see --help)", arg)
		}
		if err := applyConfigFile(fs, arg, ignore); err != nil {
			return err
		}
		rest = fs.Args()[1:]
	}
	o.explicitFlags = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.explicitFlags[f.Name] = true })
	return nil
}

// flagError rewrites the flag package's message with the two dashes the
// usage shows: "invalid boolean value "maybe" for --bias: parse error".
func flagError(err error) string {
	msg := firstLine(err.Error())
	for _, r := range [][2]string{
		{"flag provided but not defined: -", "unknown flag --"},
		{"for flag -", "for flag --"},
		{"for -", "for --"},
		{"flag needs an argument: -", "flag needs an argument: --"},
	} {
		if strings.Contains(msg, r[0]) {
			return strings.Replace(msg, r[0], r[1], 1)
		}
	}
	return msg
}

// corpusFlag is --data (dataset false) or --dataset: each sets its field
// and clears the other, so the later one applies.
type corpusFlag struct {
	o       *options
	dataset bool
}

// String returns the flag's value.
func (f *corpusFlag) String() string {
	switch {
	case f == nil || f.o == nil:
		return ""
	case f.dataset:
		return f.o.Dataset
	}
	return f.o.Data
}

// Set sets the flag's field and clears the other's.
func (f *corpusFlag) Set(s string) error {
	if f.dataset {
		f.o.Dataset, f.o.Data = s, ""
	} else {
		f.o.Data, f.o.Dataset = s, ""
	}
	return nil
}

// Get returns the value, a string (flag.Getter).
func (f *corpusFlag) Get() any { return f.String() }

// resolveDataset returns what --dataset=name names, as nanoGPT's train.py
// reads data/NAME: a folder holding nanoGPT's prepared train.bin and
// val.bin (binDir, preferred, as train.py reads them), else its input.txt
// (file); the folder is data/NAME when name is a plain name and data/NAME
// is a folder, else name itself. A name that is a file is that text file.
func resolveDataset(name string) (file, binDir string, err error) {
	var dirs []string
	if !strings.ContainsRune(name, filepath.Separator) && name != "." && name != ".." {
		dirs = append(dirs, filepath.Join("data", name))
	}
	dirs = append(dirs, name)
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil || !st.IsDir() {
			continue
		}
		if data.HasPrepared(d) {
			return "", d, nil
		}
		f := filepath.Join(d, "input.txt")
		if _, err := os.Stat(f); err != nil {
			hint := "give --data=FILE"
			if d != name {
				hint = "nanoGPT's " + filepath.Join(d, "prepare.py") + " writes train.bin and val.bin there; or give --data=FILE"
			}
			return "", "", fmt.Errorf("--dataset=%s: folder %s has neither nanoGPT's train.bin and val.bin nor an input.txt (%s)", name, d, hint)
		}
		return f, "", nil
	}
	if st, err := os.Stat(name); err == nil && st.Mode().IsRegular() {
		return name, "", nil
	}
	return "", "", fmt.Errorf("--dataset=%s: no folder %s with nanoGPT's train.bin and val.bin or an input.txt (nanoGPT's data/NAME; or give --data=FILE)", name, strings.Join(dirs, " or "))
}

// readPrompt replaces a --start=FILE:path prompt by the text of the file,
// as nanoGPT's sample.py does.
func (o *options) readPrompt() error {
	if o.promptRead || !strings.HasPrefix(o.Prompt, "FILE:") {
		return nil
	}
	path := strings.TrimPrefix(o.Prompt, "FILE:")
	b, err := readLimited(path, maxPromptBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--start=FILE:%s: the file does not exist", path)
		}
		return fmt.Errorf("--start=FILE:%s: %v", path, err)
	}
	o.Prompt, o.promptRead = string(b), true
	return nil
}

// maxPromptBytes bounds a --start=FILE:path prompt: 4 MiB of text, far
// more tokens than any model's context.
const maxPromptBytes = 4 << 20

// readLimited reads the file at path, which may be a pipe, a FIFO or a
// device, and fails once it is longer than limit bytes, having read only
// limit+1 of them (so /dev/zero or a huge file costs no more memory).
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, pathless(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, errors.New("is a directory, not a text file")
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading: %v", pathless(err))
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("the file is longer than %d MiB, the most this reads", limit>>20)
	}
	return b, nil
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

// notes writes one line for each flag that is accepted but has no effect
// worth a word (--wandb_log), and for nanoGPT's ckpt.pt in out_dir.
func (o *options) notes(w io.Writer) {
	for _, n := range o.initNotes {
		fmt.Fprintf(w, "train: note: %s\n", n)
	}
	if !o.Resume && !o.EvalOnly {
		if _, err := os.Stat(filepath.Join(o.OutDir, nanoGPTCkpt)); err == nil {
			fmt.Fprintf(w, "train: note: %s is nanoGPT's checkpoint, which train does not read; this run writes its own %s beside it\n", filepath.Join(o.OutDir, nanoGPTCkpt), ckptName)
		}
	}
	if o.WandbLog {
		fmt.Fprintf(w, "train: note: --wandb_log: Wick does not log to Weights & Biases; the log goes to %s\n", filepath.Join(o.OutDir, "log.jsonl"))
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// useDevice turns --device into a device, checking that this binary can
// use it, and makes it the default device for new tensors.
func useDevice(s string) (tensor.Device, error) {
	dev, err := resolveDevice(s)
	if err != nil {
		return tensor.Device{}, err
	}
	return dev, tensor.SetDefaultDevice(dev)
}

// resolveDevice turns --device into a device, checking that this binary
// can use it.
func resolveDevice(s string) (tensor.Device, error) {
	if s == "auto" {
		if _, err := tensor.BackendFor(tensor.CUDA(0)); err == nil {
			return tensor.CUDA(0), nil
		}
		return tensor.CPU, nil
	}
	dev, err := tensor.ParseDevice(s)
	if err != nil {
		return tensor.Device{}, fmt.Errorf("--device: %w", err)
	}
	if _, err := tensor.BackendFor(dev); err != nil {
		return tensor.Device{}, fmt.Errorf("--device=%s: %s", s, strings.TrimPrefix(err.Error(), "tensor: "))
	}
	return dev, nil
}

// validateSample checks the generation flags.
func (o *options) validateSample() error {
	switch {
	case o.NumTokens < 0:
		return fmt.Errorf("--num_tokens must be ≥ 0, got %d", o.NumTokens)
	case o.NumSamples < 0:
		return fmt.Errorf("--num_samples must be ≥ 0, got %d", o.NumSamples)
	case sampling.CheckTemperature(o.Temperature) != nil:
		return fmt.Errorf("--temperature%v", sampling.CheckTemperature(o.Temperature))
	case o.TopK < 0:
		return fmt.Errorf("--top_k must be ≥ 0, got %d", o.TopK)
	}
	if _, err := weightDType(o.Dtype); err != nil {
		return err
	}
	if err := o.readPrompt(); err != nil {
		return err
	}
	return o.checkBounds()
}

// validate checks the train flags, naming the first bad one.
func (o *options) validate() error {
	pos := []struct {
		name string
		v    int
	}{{"n_layer", o.NLayer}, {"n_head", o.NHead}, {"n_embd", o.NEmbd}, {"block_size", o.BlockSize},
		{"batch_size", o.BatchSize}, {"gradient_accumulation_steps", o.GradAccum}, {"eval_interval", o.EvalInterval},
		{"eval_iters", o.EvalIters}, {"log_interval", o.LogInterval}, {"data_max_bytes", o.DataMaxBytes}}
	for _, p := range pos {
		if p.v <= 0 {
			return fmt.Errorf("--%s must be positive, got %d", p.name, p.v)
		}
	}
	nonneg := []struct {
		name string
		v    int
	}{{"max_iters", o.MaxIters}, {"warmup_iters", o.WarmupIters}, {"lr_decay_iters", o.LRDecayIters}}
	for _, p := range nonneg {
		if p.v < 0 {
			return fmt.Errorf("--%s must be ≥ 0, got %d", p.name, p.v)
		}
	}
	if o.NEmbd%o.NHead != 0 {
		return fmt.Errorf("--n_embd=%d is not divisible by --n_head=%d", o.NEmbd, o.NHead)
	}
	floats := []struct {
		name   string
		v      float64
		lo, hi float64 // lo ≤ v < hi
	}{{"learning_rate", o.LearningRate, 0, math.Inf(1)}, {"min_lr", o.MinLR, 0, math.Inf(1)},
		{"weight_decay", o.WeightDecay, 0, math.Inf(1)}, {"grad_clip", o.GradClip, 0, math.Inf(1)},
		{"beta1", o.Beta1, 0, 1}, {"beta2", o.Beta2, 0, 1}, {"dropout", o.Dropout, 0, 1}}
	for _, f := range floats {
		if !(f.v >= f.lo && f.v < f.hi) {
			return fmt.Errorf("--%s=%v is out of range [%v, %v)", f.name, f.v, f.lo, f.hi)
		}
	}
	if o.LearningRate == 0 {
		return errors.New("--learning_rate must be positive, got 0")
	}
	switch o.Tokenizer {
	case "char":
	case "bpe":
		if o.VocabSize < 256 || o.VocabSize > 1<<16 {
			return fmt.Errorf("--vocab_size=%d is out of range for --tokenizer=bpe (want 256 to 65536)", o.VocabSize)
		}
	case "gpt2":
	default:
		return fmt.Errorf("--tokenizer=%s is unknown (want char, bpe or gpt2)", o.Tokenizer)
	}
	switch o.InitFrom {
	case "scratch":
	case "resume":
		o.Resume = true
	case "":
		return errors.New("--init_from must not be empty (want scratch, resume, or a pretrained model's directory or hub name)")
	}
	switch o.Progress {
	case "auto", "bar", "plain":
	default:
		return fmt.Errorf("--progress=%s is unknown (want auto, bar or plain)", o.Progress)
	}
	if o.OutDir == "" {
		return errors.New("--out_dir must not be empty")
	}
	if o.Data == "" && o.Dataset != "" && o.binDir == "" {
		f, dir, err := resolveDataset(o.Dataset)
		if err != nil {
			return err
		}
		o.Data, o.binDir = f, dir
	}
	return o.validateSample()
}

// decayIters returns lr_decay_iters, with 0 meaning max_iters.
func (o *options) decayIters() int {
	if o.LRDecayIters == 0 {
		return max(o.MaxIters, 1)
	}
	return o.LRDecayIters
}
