package nn

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/safetensors"
	"github.com/wickml/wick/tensor"
)

// tiedModule is implemented by modules whose state dict lists a parameter
// under a second name (GPT's lm_head.weight, which is wte's weight).
type tiedModule interface {
	tiedParameters() []NamedParam
}

// ignoringModule is implemented by modules whose files may hold tensors
// that carry no weights (nanoGPT's causal-mask buffers).
type ignoringModule interface {
	ignoredKey(name string) bool
}

// StateDictOf returns m's parameters by name, including the second names
// of tied parameters (like PyTorch's state_dict, so that a strict
// load_state_dict in PyTorch accepts a file written from it). The tensors
// are m's own, detached, not copies. It panics like NewContainer if m
// embeds a Container that leaves out a field holding parameters.
func StateDictOf(m Module) StateDict {
	checkModule("StateDictOf", m)
	sd := StateDict{}
	for _, p := range m.NamedParameters() {
		sd[p.Name] = p.Param.Detach()
	}
	if t, ok := m.(tiedModule); ok {
		for _, p := range t.tiedParameters() {
			sd[p.Name] = p.Param.Detach()
		}
	}
	return sd
}

// LoadStateDict copies sd into m's parameters. Every parameter must be
// present with its shape and dtype Float32; the second names of tied
// parameters (lm_head.weight) may be present or not, and tensors that the
// module ignores (nanoGPT's transformer.h.N.attn.bias masks) are skipped;
// any other name is an error. All problems are reported together, each
// naming its tensor and wrapping ErrMissingTensor, ErrUnexpectedTensor,
// ErrShapeMismatch or ErrDTypeMismatch (several: the first on the
// error's line, the next few one per line below it, then how many more);
// a nil tensor is an error naming it (ErrMissingTensor); m is changed only
// if there are none. Like PyTorch, a tied tensor present under both names takes the
// value listed last in the state dict (lm_head.weight). It panics like
// NewContainer if m embeds a Container that leaves out a field holding
// parameters.
func LoadStateDict(m Module, sd StateDict) error {
	checkModule("LoadStateDict", m)
	var errs []error
	check := func(p NamedParam, t *tensor.Tensor) {
		switch {
		case t == nil:
			errs = append(errs, fmt.Errorf("tensor %q: %w: the state dict holds nil under its name (model needs shape %v)", p.Name, ErrMissingTensor, p.Param.Shape()))
		case t.DType() != tensor.Float32:
			errs = append(errs, fmt.Errorf("tensor %q: %w: file has %s, model needs %s", p.Name, ErrDTypeMismatch, t.DType(), p.Param.DType()))
		case !slices.Equal(t.Shape(), p.Param.Shape()):
			errs = append(errs, fmt.Errorf("tensor %q: %w: file has %v, model needs %v", p.Name, ErrShapeMismatch, t.Shape(), p.Param.Shape()))
		}
	}
	known := map[string]bool{}
	var copies []NamedParam // destination with the source's name
	for _, p := range m.NamedParameters() {
		known[p.Name] = true
		t, ok := sd[p.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("tensor %q: %w (model needs shape %v)", p.Name, ErrMissingTensor, p.Param.Shape()))
			continue
		}
		check(p, t)
		copies = append(copies, p)
	}
	if tm, ok := m.(tiedModule); ok {
		for _, p := range tm.tiedParameters() {
			known[p.Name] = true
			if t, ok := sd[p.Name]; ok {
				check(p, t)
				copies = append(copies, p)
			}
		}
	}
	im, _ := m.(ignoringModule)
	for _, name := range sd.Names() {
		if !known[name] && (im == nil || !im.ignoredKey(name)) {
			errs = append(errs, fmt.Errorf("tensor %q: %w: the model has no parameter of that name", name, ErrUnexpectedTensor))
		}
	}
	if len(errs) > 0 {
		return problemList(errs)
	}
	// In place, into parameters that require grad: inside NoGrad, like
	// PyTorch's load_state_dict.
	autograd.NoGrad(func() {
		for _, p := range copies {
			p.Param.CopyFrom(sd[p.Name])
		}
	})
	return nil
}

// Save writes m's state dict (StateDictOf) to w in the safetensors format.
func Save(w io.Writer, m Module) error {
	return WriteStateDict(w, StateDictOf(m), nil)
}

// Load reads a safetensors stream into m (see ReadStateDict and
// LoadStateDict). The header is checked against m's parameters by name,
// dtype and shape, and the memory the tensors take against
// tensor.MaxAllocBytes, before any tensor is read, as LoadFile does;
// tensors m does not need (the attention-mask buffers; a cmd/train
// checkpoint's optimizer state) are skipped unread, and a NaN or an
// infinity is an error wrapping ErrNonFinite. On error m is unchanged.
func Load(r io.Reader, m Module) error {
	if err := load(r, m); err != nil {
		return fmt.Errorf("nn: load: %w", err)
	}
	return nil
}

func load(r io.Reader, m Module) error {
	checkModule("Load", m)
	entries, meta, _, err := safetensors.ReadHeader(r)
	if err != nil {
		return err
	}
	want, err := moduleEntries(m, entries, meta)
	if err != nil {
		return err
	}
	sd, err := readStreamTensors(r, want, true)
	if err != nil {
		return err
	}
	return LoadStateDict(m, sd)
}

// moduleEntries checks the entries of a safetensors header against m's
// parameters, as LoadStateDict checks a state dict, and their memory
// against tensor.MaxAllocBytes, before any tensor is read, and returns the
// entries to read: those m needs. A checkpoint of cmd/train's (metadata
// format TrainCheckpointFormat) has its optimizer's tensors left out.
func moduleEntries(m Module, entries []safetensors.Entry, meta map[string]string) ([]safetensors.Entry, error) {
	if meta[MetaFormat] == TrainCheckpointFormat {
		entries, _ = withoutOptimizer(entries)
	}
	want, errs := moduleTarget(m).check(entries)
	if len(errs) > 0 {
		return nil, problemList(errs)
	}
	if err := checkBudget(want, 0); err != nil {
		return nil, err
	}
	return want, nil
}

// SaveFile writes m's parameters to path as a safetensors file with
// PyTorch's names, atomically: path holds either its old contents or the
// whole new file.
func SaveFile(path string, m Module) error {
	return SaveStateDictFile(path, StateDictOf(m), nil)
}

// LoadFile reads the safetensors file at path into m. Every tensor's name,
// dtype and shape is checked against m's parameters, and the memory they
// take against tensor.MaxAllocBytes (ErrTooLarge), before any is read: a
// tensor m has no place for is refused by name (ErrUnexpectedTensor)
// without being read, and a NaN or an infinity is an error wrapping
// ErrNonFinite. A file written by PyTorch from nanoGPT's model loads
// whether or not it holds the tied lm_head.weight and the attention-mask
// buffers (which are not read). A checkpoint written by cmd/train
// (metadata format TrainCheckpointFormat) loads into a GPT of its config:
// the optimizer's tensors (OptimizerPrefix) are skipped unread, and
// LoadCheckpoint builds that GPT and its tokenizer in one call. On error m
// is unchanged and the error names the file, the tensors and the problems.
func LoadFile(path string, m Module) error {
	if err := loadFile(path, m); err != nil {
		return fmt.Errorf("nn: load %s: %w", path, err)
	}
	return nil
}

func loadFile(path string, m Module) error {
	checkModule("LoadFile", m)
	h, err := safetensors.ReadFileHeader(path)
	if err != nil {
		return trimmed{err, path + ": "}
	}
	want, err := moduleEntries(m, h.Entries, h.Metadata)
	if err != nil {
		return err
	}
	sd, err := readFileTensors(h, want, true)
	if err != nil {
		return err
	}
	return LoadStateDict(m, sd)
}

// errorList reports several problems: the first, decisive one on the
// error's own line, then each other one once (a problem whose message
// repeats an earlier one's is left out) on its own indented line, at most
// maxProblems in all, then how many more there are:
//
//	nn: load m.safetensors: tensor "a": missing tensor (model needs shape [2])
//		tensor "b": shape mismatch: file has [3], model needs [2]
//		and 7 more problems
type errorList []error

func (e errorList) Error() string {
	var b strings.Builder
	seen := map[string]bool{}
	listed, left := 0, 0
	for _, err := range e {
		msg := err.Error()
		if seen[msg] {
			continue
		}
		seen[msg] = true
		if listed == maxProblems {
			left++
			continue
		}
		if listed > 0 {
			b.WriteString("\n\t")
		}
		b.WriteString(strings.ReplaceAll(msg, "\n", "\n\t"))
		listed++
	}
	if left > 0 {
		fmt.Fprintf(&b, "\n\tand %d more problems", left)
	}
	return b.String()
}

func (e errorList) Unwrap() []error { return e }
