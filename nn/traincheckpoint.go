package nn

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wickml/wick/safetensors"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// The layout of the checkpoints cmd/train writes: a safetensors file whose
// metadata has "format" TrainCheckpointFormat and, under MetaTrain, a JSON
// record holding at least the model's config ("model_args"), its tokenizer
// ("tokenizer", as tokenizer.Unmarshal reads it) and the optimizer steps
// taken ("iter"). The model's tensors carry nanoGPT's names; the
// optimizer's start with OptimizerPrefix.
const (
	TrainCheckpointFormat = "wick-train/1"
	MetaFormat            = "format"
	MetaTrain             = "wick_train"
	OptimizerPrefix       = "optimizer."
)

// Bounds on a train checkpoint's model_args, far above any model train can
// build but low enough that no product of them overflows: a checkpoint
// beyond them was not written by train.
const (
	MaxCheckpointLayers    = 1 << 12
	MaxCheckpointHeads     = 1 << 12
	MaxCheckpointEmbd      = 1 << 17
	MaxCheckpointBlockSize = 1 << 20
	MaxCheckpointVocab     = 1 << 22
)

// Checkpoint is a checkpoint written by cmd/train or SaveCheckpoint, read
// by ReadCheckpoint or LoadCheckpoint.
type Checkpoint struct {
	Path   string    // the file it was read from
	Config GPTConfig // the model's config (model_args), zero for a Llama-family model
	// LlamaConfig is the config of a Llama-family model (llama_args), nil
	// for a GPT.
	LlamaConfig *LlamaConfig
	Tokenizer   tokenizer.Tokenizer // the tokenizer the model was trained with
	Iter        int                 // optimizer steps taken
	// BestValLoss is the best validation loss seen, nil before the first
	// evaluation.
	BestValLoss *float64
	// Metadata is the whole JSON record under MetaTrain, with what train
	// keeps for resuming a run (its flags, random generator states, corpus).
	Metadata json.RawMessage
	// Tensors holds every tensor of the file, the model's and the
	// optimizer's, as ReadCheckpoint read them (on the default device);
	// LoadCheckpoint leaves it nil.
	Tensors StateDict
	// Optimizer is the optimizer's state, the tensors of Tensors under
	// OptimizerPrefix with the prefix removed, as an optimizer's
	// LoadStateDict reads it (ReadCheckpoint; LoadCheckpoint leaves it
	// nil); SaveCheckpoint writes it.
	Optimizer StateDict
	// Model is the trained GPT, in evaluation mode, as LoadCheckpoint or
	// NewModel built it; ReadCheckpoint leaves it nil, and so does a
	// Llama-family checkpoint.
	Model *GPT
	// LM is the trained model of any family, in evaluation mode, as
	// LoadCheckpoint or NewCausalLM built it (Model too, for a GPT).
	LM CausalLM
	// Adapter is the LoRA adapters of a run that trained them (see
	// checkpointAdapter): SaveCheckpoint writes them, NewCausalLM applies
	// the file's to the model it builds; nil without adapters.
	Adapter *LoRA
}

// trainRecord is the part of the MetaTrain record that this package reads.
type trainRecord struct {
	Iter        int             `json:"iter"`
	BestValLoss *float64        `json:"best_val_loss"`
	Model       *GPTConfig      `json:"model_args"`
	Llama       *LlamaConfig    `json:"llama_args"`
	Tokenizer   json.RawMessage `json:"tokenizer"`
}

// LoadCheckpoint reads a checkpoint written by cmd/train (its out_dir's
// ckpt.safetensors) or by SaveCheckpoint and returns it with its Model
// built: a GPT of the checkpoint's config holding the trained weights, in
// evaluation mode, and the Tokenizer it was trained with.
//
//	ck, err := nn.LoadCheckpoint("out/ckpt.safetensors")
//	ids := ck.Tokenizer.Encode("ROMEO:")
//	out := ck.Model.Generate(tensor.FromInts(ids, 1, len(ids)), 100, 0.8, 200)
//	fmt.Println(ck.Tokenizer.Decode(out.Ints()))
//
// Building the model draws no random numbers. Everything is checked as
// ReadCheckpoint checks it before the model is built; the model's tensors
// are then read straight into it, and the optimizer's are not read (nor
// checked), so loading takes about the model's float32 size in memory,
// whatever the file holds besides. A LoRA run's adapters (under
// AdapterPrefix) are read and applied to the model, and ck.Adapter set.
// Errors are those of ReadCheckpoint.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	ck, h, err := readCheckpointHeader(path, false)
	if err != nil {
		return nil, err
	}
	var model CausalLM
	if ck.LlamaConfig != nil {
		model = newLlamaZeros(*ck.LlamaConfig, tensor.Float32)
	} else {
		model = newGPTZeros(ck.Config, tensor.Float32)
	}
	params := map[string]*tensor.Tensor{}
	for _, p := range model.NamedParameters() {
		params[p.Name] = p.Param.Detach().Reshape(-1) // the parameter's storage, written in place without recording
	}
	if tm, ok := model.(tiedModule); ok {
		for _, p := range tm.tiedParameters() {
			params[p.Name] = p.Param.Detach().Reshape(-1)
		}
	}
	r := safetensors.NewReaderSize(chunkBytes)
	defer r.Close()
	r.RequireFinite(true)
	// A tied head present under both names takes lm_head.weight's values,
	// as LoadStateDict gives it: that name is read last.
	entries := slices.Clone(h.model)
	slices.SortStableFunc(entries, func(a, b safetensors.Entry) int {
		return cmpBool(a.Name == "lm_head.weight", b.Name == "lm_head.weight")
	})
	for _, e := range entries {
		dst := params[e.Name]
		if err := r.Each(h.file.Ref(e), func(off int, v []float32) { dst.SetFloat32s(off, v) }); err != nil {
			return nil, fmt.Errorf("nn: checkpoint %s is corrupt or unreadable: %w", path, trimmed{err, path + ": "})
		}
	}
	// The adapters of a LoRA run, bounded before they are read (see
	// checkAdapterEntries), applied as NewCausalLM applies them.
	adapters, err := readFileTensors(h.file, h.adapter, true)
	if err != nil {
		return nil, fmt.Errorf("nn: checkpoint %s is corrupt or unreadable: %w", path, err)
	}
	ck.Tensors = adapters
	err = ck.applyAdapter(model)
	ck.Tensors = nil
	if err != nil {
		return nil, err
	}
	model.Eval()
	ck.LM = model
	if g, ok := model.(*GPT); ok {
		ck.Model = g
	}
	return ck, nil
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// ReadCheckpoint reads a checkpoint written by cmd/train without building
// its model: its metadata, its tokenizer and all its tensors (Tensors).
// Everything is checked before any tensor is read: that the file is a
// safetensors file with train's metadata format; that model_args (or
// llama_args) is a valid config within the MaxCheckpoint bounds whose
// model fits under tensor.MaxAllocBytes (ErrTooLarge); that the tokenizer
// reads back (its tokens bounded in length) and fits the model's
// vocabulary; that the model's tensors are exactly those of a model of the
// config, by name, dtype and shape (one it has no place for is refused by
// name, unread: ErrUnexpectedTensor); that a LoRA run's adapter tensors
// (under AdapterPrefix) are F32, none larger than the model's largest
// parameter and all together at most the model's size; that the
// optimizer's tensors are F32 or I64, none larger than the model's largest
// parameter (ErrShapeMismatch) and all together at most three times the
// model; and
// that everything to read fits under tensor.MaxAllocBytes. A NaN or an
// infinity in any tensor is an error wrapping ErrNonFinite. An error names
// the file and the problem: "was not written by train" when the format
// differs, "is corrupt" otherwise.
func ReadCheckpoint(path string) (*Checkpoint, error) {
	ck, h, err := readCheckpointHeader(path, true)
	if err != nil {
		return nil, err
	}
	sd, err := readFileTensors(h.file, slices.Concat(h.model, h.adapter, h.optimizer), true)
	if err != nil {
		return nil, fmt.Errorf("nn: checkpoint %s is corrupt or unreadable: %w", path, err)
	}
	ck.Tensors, ck.Optimizer = sd, sd.WithPrefix(OptimizerPrefix)
	return ck, nil
}

// checkpointHeader is what readCheckpointHeader found: the file's header,
// the model's entries to read and (when asked for) the optimizer's, all
// checked.
type checkpointHeader struct {
	file                      *safetensors.FileHeader
	model, adapter, optimizer []safetensors.Entry
}

// readCheckpointHeader reads and checks everything of the checkpoint at
// path but the tensors' data (see ReadCheckpoint); the optimizer's entries
// only when withOptimizer is true (else they are neither checked nor
// read).
func readCheckpointHeader(path string, withOptimizer bool) (*Checkpoint, *checkpointHeader, error) {
	h, err := safetensors.ReadFileHeader(path)
	if err != nil {
		return nil, nil, fmt.Errorf("nn: checkpoint %s is corrupt or unreadable: %w", path, trimmed{err, path + ": "})
	}
	if h.Metadata[MetaFormat] != TrainCheckpointFormat {
		return nil, nil, fmt.Errorf("nn: checkpoint %s was not written by train (metadata format %q, want %q)", path, h.Metadata[MetaFormat], TrainCheckpointFormat)
	}
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("nn: checkpoint %s is corrupt: "+format, append([]any{path}, args...)...)
	}
	var rec trainRecord
	if err := json.Unmarshal([]byte(h.Metadata[MetaTrain]), &rec); err != nil {
		return nil, nil, corrupt("metadata: %v", err)
	}
	if (rec.Model == nil && rec.Llama == nil) || len(rec.Tokenizer) == 0 || rec.Iter < 0 {
		return nil, nil, corrupt("metadata lacks the model_args, the tokenizer or the step")
	}
	ck := &Checkpoint{Path: path, Iter: rec.Iter, BestValLoss: rec.BestValLoss, Metadata: json.RawMessage(h.Metadata[MetaTrain])}
	var target loadTarget
	var sizeErr error
	if rec.Llama != nil {
		lc := *rec.Llama
		if err := llamaCheckpointBounds(lc); err != nil {
			return nil, nil, corrupt("%v", err)
		}
		if err := lc.Validate(); err != nil {
			return nil, nil, corrupt("%s", strings.TrimPrefix(err.Error(), "nn: "))
		}
		tok, err := tokenizer.Unmarshal(rec.Tokenizer)
		if err != nil {
			return nil, nil, corrupt("%v", err)
		}
		if tok.VocabSize() > lc.VocabSize {
			return nil, nil, corrupt("its tokenizer has %d tokens, more than its model's %d", tok.VocabSize(), lc.VocabSize)
		}
		if err := llamaCheckpointShapes(h.Entries, lc); err != nil {
			return nil, nil, corrupt("%v", err)
		}
		ck.LlamaConfig, ck.Tokenizer, target, sizeErr = &lc, tok, llamaTarget(lc), lc.checkSize()
	} else {
		cfg := *rec.Model
		if err := checkpointBounds(cfg); err != nil {
			return nil, nil, corrupt("%v", err)
		}
		if err := cfg.Validate(); err != nil {
			return nil, nil, corrupt("%s", strings.TrimPrefix(err.Error(), "nn: "))
		}
		tok, err := tokenizer.Unmarshal(rec.Tokenizer)
		if err != nil {
			return nil, nil, corrupt("%v", err)
		}
		if tok.VocabSize() != cfg.VocabSize {
			return nil, nil, corrupt("its tokenizer has %d tokens, its model %d", tok.VocabSize(), cfg.VocabSize)
		}
		if err := checkpointShapes(h.Entries, cfg); err != nil {
			return nil, nil, corrupt("%v", err)
		}
		ck.Config, ck.Tokenizer, target, sizeErr = cfg, tok, gptTarget(cfg), cfg.checkSize()
	}
	if sizeErr != nil { // the model the file declares, before it is built or read
		return nil, nil, fmt.Errorf("nn: checkpoint %s: %w", path, sizeErr)
	}
	modelEntries, optEntries := withoutOptimizer(h.Entries)
	modelEntries, adapterEntries := splitPrefix(modelEntries, AdapterPrefix)
	read, errs := target.check(modelEntries)
	if len(errs) > 0 {
		return nil, nil, corrupt("%w", problemList(errs))
	}
	if err := checkAdapterEntries(adapterEntries, target); err != nil {
		return nil, nil, corrupt("%w", err)
	}
	ch := &checkpointHeader{file: h, model: read, adapter: adapterEntries}
	if !withOptimizer {
		// LoadCheckpoint reads into the model cfg.checkSize admitted, and
		// the adapters beside it.
		if err := checkBudget(adapterEntries, target.bytes()); err != nil {
			return nil, nil, fmt.Errorf("nn: checkpoint %s: %w", path, err)
		}
		return ck, ch, nil
	}
	if err := checkOptimizerEntries(optEntries, target); err != nil {
		return nil, nil, corrupt("%w", err)
	}
	ch.optimizer = optEntries
	if err := checkBudget(slices.Concat(read, adapterEntries, optEntries), 0); err != nil {
		return nil, nil, fmt.Errorf("nn: checkpoint %s: %w", path, err)
	}
	return ck, ch, nil
}

// NewModel builds ck.Model from ck.Tensors (the model's; the optimizer's
// are ignored), in evaluation mode on the default device, and returns it.
// It draws no random numbers. It returns an error naming the tensors that
// are missing, unexpected or of the wrong shape, and then builds nothing.
// NewModel panics if ck.Tensors is nil (a Checkpoint from LoadCheckpoint).
func (ck *Checkpoint) NewModel() (*GPT, error) {
	if ck.Tensors == nil {
		panic(&tensor.Error{Pkg: "nn", Op: "Checkpoint.NewModel", Msg: "the checkpoint holds no tensors (LoadCheckpoint has built its Model already)"})
	}
	model := newGPTZeros(ck.Config, tensor.Float32)
	if err := LoadStateDict(model, ck.modelTensors()); err != nil {
		return nil, fmt.Errorf("nn: checkpoint %s does not match its model_args: %w", ck.Path, err)
	}
	if err := ck.applyAdapter(model); err != nil {
		return nil, err
	}
	model.Eval()
	ck.Model = model
	return model, nil
}

// NewCausalLM builds the checkpoint's model of any family from ck.Tensors
// (as NewModel does for a GPT, which it calls then), in evaluation mode on
// the default device, sets ck.LM (and ck.Model for a GPT) and returns it.
// It draws no random numbers and returns an error naming the tensors that
// are missing, unexpected or of the wrong shape. It panics if ck.Tensors
// is nil.
func (ck *Checkpoint) NewCausalLM() (CausalLM, error) {
	if ck.LlamaConfig == nil {
		g, err := ck.NewModel()
		if err != nil {
			return nil, err
		}
		ck.LM = g
		return g, nil
	}
	if ck.Tensors == nil {
		panic(&tensor.Error{Pkg: "nn", Op: "Checkpoint.NewCausalLM", Msg: "the checkpoint holds no tensors (LoadCheckpoint has built its model already)"})
	}
	model := newLlamaZeros(*ck.LlamaConfig, tensor.Float32)
	if err := LoadStateDict(model, ck.modelTensors()); err != nil {
		return nil, fmt.Errorf("nn: checkpoint %s does not match its llama_args: %w", ck.Path, err)
	}
	if err := ck.applyAdapter(model); err != nil {
		return nil, err
	}
	model.Eval()
	ck.LM = model
	return model, nil
}

// llamaCheckpointBounds returns an error naming the first size of c above
// the MaxCheckpoint bounds.
func llamaCheckpointBounds(c LlamaConfig) error {
	return firstOutOfRange("llama_args", []sizeBound{{"num_hidden_layers", c.NumHiddenLayers, MaxCheckpointLayers},
		{"num_attention_heads", c.NumAttentionHeads, MaxCheckpointHeads}, {"num_key_value_heads", c.NumKeyValueHeads, MaxCheckpointHeads},
		{"head_dim", c.HeadDim, MaxCheckpointEmbd}, {"hidden_size", c.HiddenSize, MaxCheckpointEmbd},
		{"intermediate_size", c.IntermediateSize, 8 * MaxCheckpointEmbd}, {"vocab_size", c.VocabSize, MaxCheckpointVocab}})
}

// llamaCheckpointShapes checks that the entries hold c's token embedding
// and each layer's query projection as F32 at c's shapes, so that a
// config the file's data do not back is refused before it is built.
func llamaCheckpointShapes(entries []safetensors.Entry, c LlamaConfig) error {
	ec := newEntryCheck(entries, "llama_args")
	ec.want("model.embed_tokens.weight", c.VocabSize, c.HiddenSize)
	for l := range c.NumHiddenLayers {
		ec.want(fmt.Sprintf("model.layers.%d.self_attn.q_proj.weight", l), c.NumAttentionHeads*c.HeadDim, c.HiddenSize)
		if ec.full() {
			break
		}
	}
	return ec.err()
}

// checkpointBounds returns an error naming the first size of c above its
// MaxCheckpoint bound.
func checkpointBounds(c GPTConfig) error {
	return firstOutOfRange("model_args", []sizeBound{{"n_layer", c.NLayer, MaxCheckpointLayers}, {"n_head", c.NHead, MaxCheckpointHeads},
		{"n_embd", c.NEmbd, MaxCheckpointEmbd}, {"block_size", c.BlockSize, MaxCheckpointBlockSize}, {"vocab_size", c.VocabSize, MaxCheckpointVocab}})
}

// checkpointShapes checks that the header entries hold GPT c's token and
// position embeddings and each layer's attention weight as F32 at c's
// shapes: then the model NewModel builds is at most a few times the size
// of the file.
func checkpointShapes(entries []safetensors.Entry, c GPTConfig) error {
	ec := newEntryCheck(entries, "model_args")
	ec.want("transformer.wte.weight", c.VocabSize, c.NEmbd)
	ec.want("transformer.wpe.weight", c.BlockSize, c.NEmbd)
	for l := range c.NLayer {
		ec.want(fmt.Sprintf("transformer.h.%d.attn.c_attn.weight", l), 3*c.NEmbd, c.NEmbd)
		if ec.full() {
			break
		}
	}
	return ec.err()
}

// sizeBound is one size of a checkpoint's config and its MaxCheckpoint
// bound.
type sizeBound struct {
	name   string
	v, max int
}

// firstOutOfRange returns an error naming the first size above its bound,
// as args (model_args, llama_args) spells it, or nil.
func firstOutOfRange(args string, bounds []sizeBound) error {
	for _, f := range bounds {
		if f.v > f.max {
			return fmt.Errorf("%s %s=%d is out of range (at most %d)", args, f.name, f.v, f.max)
		}
	}
	return nil
}

// entryCheck collects the problems of a checkpoint's header entries
// against the F32 shapes its config (args: model_args or llama_args)
// needs.
type entryCheck struct {
	byName   map[string]safetensors.Entry
	args     string
	problems []error
}

func newEntryCheck(entries []safetensors.Entry, args string) *entryCheck {
	ec := &entryCheck{byName: make(map[string]safetensors.Entry, len(entries)), args: args}
	for _, e := range entries {
		ec.byName[e.Name] = e
	}
	return ec
}

// want records a problem unless the entry name is F32 of shape.
func (ec *entryCheck) want(name string, shape ...int) {
	e, ok := ec.byName[name]
	switch {
	case !ok:
		ec.problems = append(ec.problems, fmt.Errorf("tensor %q: %w (%s need shape %v)", name, ErrMissingTensor, ec.args, shape))
	case e.DType != "F32":
		ec.problems = append(ec.problems, fmt.Errorf("tensor %q: %w: file has %s, model needs F32", name, ErrDTypeMismatch, e.DType))
	case !slices.Equal(e.Shape, shape):
		ec.problems = append(ec.problems, fmt.Errorf("tensor %q: %w: file has %v, %s need %v", name, ErrShapeMismatch, e.Shape, ec.args, shape))
	}
}

// full reports whether more problems than an error lists have been found.
func (ec *entryCheck) full() bool { return len(ec.problems) > maxProblems }

// err returns the problems as one error, or nil.
func (ec *entryCheck) err() error {
	if len(ec.problems) == 0 {
		return nil
	}
	return problemList(ec.problems)
}

// trimmed is err without its message's prefix (the path that the message
// around it names already).
type trimmed struct {
	err    error
	prefix string
}

func (t trimmed) Error() string { return strings.TrimPrefix(t.err.Error(), t.prefix) }
func (t trimmed) Unwrap() error { return t.err }
