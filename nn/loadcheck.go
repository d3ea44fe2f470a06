package nn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/wickml/wick/safetensors"
	"github.com/wickml/wick/tensor"
)

// The rule every reader of a safetensors file or stream in this package
// follows: the header is read with a byte limit (safetensors.MaxHeaderLen)
// and checked against the file's length; every tensor's name, dtype and
// shape is checked against what the caller needs (a module's parameters,
// a checkpoint's config), and the memory the tensors to be read take
// against tensor.MaxAllocBytes; only then are they read, a chunk at a
// time, each into storage of its checked size. Tensors the caller does not
// need are skipped, never read. The loaders of weights refuse a NaN or an
// infinity as they read it (ErrNonFinite).

// ErrNonFinite is wrapped by the errors of the loaders of weights (LoadFile,
// Load, LoadCheckpoint, ReadCheckpoint, LoadPretrained, LoadCausalLM) about
// a NaN or an infinity in a tensor; the message names the file, the tensor
// and the element. It is the same value as safetensors.ErrNonFinite.
// LoadStateDictFile and ReadStateDict, which do not judge values, return
// such tensors as they are.
var ErrNonFinite = safetensors.ErrNonFinite

// paramSpec is a float32 parameter a loader fills: its name and shape.
type paramSpec struct {
	name  string
	shape []int
}

// loadTarget is what a module, or a model described by its config, needs
// from a file.
type loadTarget struct {
	params  []paramSpec       // every one must be present
	tied    []paramSpec       // second names of tied parameters: may be present
	ignored func(string) bool // tensors that carry no weights (may be nil)
	needs   string            // who needs them, in messages: "model needs"
}

// moduleTarget describes m's parameters as LoadStateDict loads them.
func moduleTarget(m Module) loadTarget {
	t := loadTarget{needs: "model needs"}
	for _, p := range m.NamedParameters() {
		t.params = append(t.params, paramSpec{p.Name, p.Param.Shape()})
	}
	if tm, ok := m.(tiedModule); ok {
		for _, p := range tm.tiedParameters() {
			t.tied = append(t.tied, paramSpec{p.Name, p.Param.Shape()})
		}
	}
	if im, ok := m.(ignoringModule); ok {
		t.ignored = im.ignoredKey
	}
	return t
}

// specList collects parameter specs in a model's NamedParameters order.
type specList []paramSpec

func (s *specList) add(name string, shape ...int) { *s = append(*s, paramSpec{name, shape}) }

// linear adds a Linear layer's weight [out, in] and, with bias, its bias.
func (s *specList) linear(name string, in, out int, bias bool) {
	s.add(name+".weight", out, in)
	if bias {
		s.add(name+".bias", out)
	}
}

// gptTarget describes the parameters of a GPT of c, computed from c alone
// (in NamedParameters' order, as newGPTZeros builds them), so that a
// checkpoint is checked before its model is built.
func gptTarget(c GPTConfig) loadTarget {
	e := c.NEmbd
	var s specList
	norm := func(name string) {
		s.add(name+".weight", e)
		if c.Bias {
			s.add(name+".bias", e)
		}
	}
	s.add("transformer.wte.weight", c.VocabSize, e)
	s.add("transformer.wpe.weight", c.BlockSize, e)
	for l := range c.NLayer {
		p := fmt.Sprintf("transformer.h.%d.", l)
		norm(p + "ln_1")
		s.linear(p+"attn.c_attn", e, 3*e, c.Bias)
		s.linear(p+"attn.c_proj", e, e, c.Bias)
		norm(p + "ln_2")
		s.linear(p+"mlp.c_fc", e, 4*e, c.Bias)
		s.linear(p+"mlp.c_proj", 4*e, e, c.Bias)
	}
	norm("transformer.ln_f")
	return loadTarget{params: s, tied: []paramSpec{{"lm_head.weight", []int{c.VocabSize, e}}}, ignored: maskBuffer.MatchString, needs: "model_args need"}
}

// llamaTarget describes the parameters of a Llama-family model of c,
// computed from c alone (in NamedParameters' order, as newLlamaZeros
// builds them).
func llamaTarget(c LlamaConfig) loadTarget {
	h, a := c.HiddenSize, c.attention()
	q, kv := a.NHeads*a.HeadDim, a.NKVHeads*a.HeadDim
	var s specList
	s.add("model.embed_tokens.weight", c.VocabSize, h)
	for l := range c.NumHiddenLayers {
		p := fmt.Sprintf("model.layers.%d.", l)
		s.linear(p+"self_attn.q_proj", h, q, a.QKVBias)
		s.linear(p+"self_attn.k_proj", h, kv, a.QKVBias)
		s.linear(p+"self_attn.v_proj", h, kv, a.QKVBias)
		s.linear(p+"self_attn.o_proj", q, h, a.OBias)
		if a.QKNorm {
			s.add(p+"self_attn.q_norm.weight", a.HeadDim)
			s.add(p+"self_attn.k_norm.weight", a.HeadDim)
		}
		s.linear(p+"mlp.gate_proj", h, c.IntermediateSize, c.MLPBias)
		s.linear(p+"mlp.up_proj", h, c.IntermediateSize, c.MLPBias)
		s.linear(p+"mlp.down_proj", c.IntermediateSize, h, c.MLPBias)
		s.add(p+"input_layernorm.weight", h)
		s.add(p+"post_attention_layernorm.weight", h)
	}
	s.add("model.norm.weight", h)
	t := loadTarget{ignored: rotaryBuffer.MatchString, needs: "llama_args need"}
	if c.TieWordEmbeddings {
		t.tied = []paramSpec{{"lm_head.weight", []int{c.VocabSize, h}}}
	} else {
		s.add("lm_head.weight", c.VocabSize, h)
	}
	t.params = s
	return t
}

// largest returns the element count of t's largest parameter.
func (t loadTarget) largest() int64 {
	var n int64
	for _, p := range t.params {
		n = max(n, numElements(p.shape))
	}
	return n
}

// bytes returns the float32 bytes of t's parameters.
func (t loadTarget) bytes() int64 {
	var n int64
	for _, p := range t.params {
		n += 4 * numElements(p.shape)
	}
	return n
}

func numElements(shape []int) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	return n
}

// fileDType returns a safetensors dtype as LoadStateDict's messages write
// dtypes: float32 for F32, int64 for I64, the others as they are.
func fileDType(dt string) string {
	switch dt {
	case "F32":
		return tensor.Float32.String()
	case "I64":
		return tensor.Int64.String()
	}
	return dt
}

// check checks a file's entries against t, as LoadStateDict checks a state
// dict, before any tensor is read, and returns the entries to read (t's
// parameters and the tied names present, in the file's order) or the
// problems, each naming its tensor and wrapping ErrMissingTensor,
// ErrUnexpectedTensor, ErrShapeMismatch or ErrDTypeMismatch, in
// LoadStateDict's order. Entries t ignores are left out, unread.
func (t loadTarget) check(entries []safetensors.Entry) ([]safetensors.Entry, []error) {
	byName := make(map[string]safetensors.Entry, len(entries))
	for _, e := range entries {
		byName[e.Name] = e
	}
	var errs []error
	want := make(map[string]bool, len(t.params)+len(t.tied))
	one := func(p paramSpec, e safetensors.Entry) {
		switch {
		case e.DType != "F32":
			errs = append(errs, fmt.Errorf("tensor %q: %w: file has %s, %s %s", p.name, ErrDTypeMismatch, fileDType(e.DType), t.needs, tensor.Float32))
		case !slices.Equal(e.Shape, p.shape):
			errs = append(errs, fmt.Errorf("tensor %q: %w: file has %v, %s %v", p.name, ErrShapeMismatch, e.Shape, t.needs, p.shape))
		}
	}
	for _, p := range t.params {
		want[p.name] = true
		e, ok := byName[p.name]
		if !ok {
			errs = append(errs, fmt.Errorf("tensor %q: %w (%s shape %v)", p.name, ErrMissingTensor, t.needs, p.shape))
			continue
		}
		one(p, e)
	}
	for _, p := range t.tied {
		if e, ok := byName[p.name]; ok {
			want[p.name] = true
			one(p, e)
		}
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !want[name] && (t.ignored == nil || !t.ignored(name)) {
			e := byName[name]
			errs = append(errs, fmt.Errorf("tensor %q: %w: the model has no parameter of that name (the file's %s %v, not read)", name, ErrUnexpectedTensor, e.DType, e.Shape))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var read []safetensors.Entry
	for _, e := range entries {
		if want[e.Name] {
			read = append(read, e)
		}
	}
	return read, nil
}

// stateDictDTypes returns an error naming the first entry whose dtype is
// neither F32 nor I64, the dtypes a StateDict holds.
func stateDictDTypes(entries []safetensors.Entry) error {
	for _, e := range entries {
		if e.DType != "F32" && e.DType != "I64" {
			return fmt.Errorf("tensor %q: %w: dtype %s is not supported (Wick reads F32 and I64)", e.Name, ErrDTypeMismatch, e.DType)
		}
	}
	return nil
}

// memBytes is the memory e takes once read: 8 bytes an element for I64, 4
// for the float dtypes (read as float32) and the others.
func memBytes(e safetensors.Entry) int64 {
	n := int64(e.NumElements())
	if e.DType == "I64" {
		return 8 * n
	}
	return 4 * n
}

// checkBudget returns an error wrapping ErrTooLarge, naming the largest
// tensor, when the tensors of entries, read into memory, would take more
// than tensor.MaxAllocBytes (the machine's memory, or train's
// --max_memory) besides committed bytes (a model built to receive them).
func checkBudget(entries []safetensors.Entry, committed int64) error {
	limit := tensor.MaxAllocBytes()
	total := committed
	big, bigBytes := -1, int64(-1)
	for i, e := range entries {
		b := memBytes(e)
		if b > bigBytes {
			big, bigBytes = i, b
		}
		total += b
	}
	if total <= limit || big < 0 {
		return nil
	}
	e := entries[big]
	return fmt.Errorf("tensor %q: %w: the %d tensors to read (the largest this one, %s %v, %s) would take %s, above the allocation limit of %s (tensor.MaxAllocBytes: the machine's memory unless set lower, as train's --max_memory does)",
		e.Name, ErrTooLarge, len(entries), e.DType, e.Shape, formatBytes(float64(bigBytes)), formatBytes(float64(total)), formatBytes(float64(limit)))
}

// checkOptimizerEntries bounds the optimizer's tensors of a checkpoint of
// a model t describes, before they are read: each F32 or I64, none with
// more elements than the model's largest parameter (an optimizer keeps at
// most one tensor per parameter and field, of the parameter's shape or
// less: a LoRA adapter's), and together at most three times the model's
// bytes and 1 MiB (AdamW keeps two moments per parameter and a step).
func checkOptimizerEntries(entries []safetensors.Entry, t loadTarget) error {
	if err := stateDictDTypes(entries); err != nil {
		return err
	}
	largest, modelBytes := t.largest(), t.bytes()
	var total int64
	for _, e := range entries {
		if n := int64(e.NumElements()); n > largest {
			return fmt.Errorf("tensor %q: %w: the optimizer's %s %v has %d elements, more than the model's largest parameter (%d)", e.Name, ErrShapeMismatch, e.DType, e.Shape, n, largest)
		}
		total += memBytes(e)
		if total > 3*modelBytes+1<<20 {
			return fmt.Errorf("tensor %q: %w: the optimizer's tensors up to this one take %s, more than three times the model's %s", e.Name, ErrUnexpectedTensor, formatBytes(float64(total)), formatBytes(float64(modelBytes)))
		}
	}
	return nil
}

// checkAdapterEntries bounds the LoRA adapters' tensors of a checkpoint
// (those under AdapterPrefix) of a model t describes, before they are
// read: each F32 with no more elements than the model's largest
// parameter, and together no more than the model's bytes and 1 MiB (an
// adapter of rank r on a Linear of [out, in] holds r·(in+out) elements);
// their names and shapes are checked against the adapters' config when
// they are applied.
func checkAdapterEntries(entries []safetensors.Entry, t loadTarget) error {
	largest, modelBytes := t.largest(), t.bytes()
	var total int64
	for _, e := range entries {
		if e.DType != "F32" {
			return fmt.Errorf("tensor %q: %w: file has %s, a LoRA adapter is %s", e.Name, ErrDTypeMismatch, fileDType(e.DType), tensor.Float32)
		}
		if n := int64(e.NumElements()); n > largest {
			return fmt.Errorf("tensor %q: %w: the adapter's %s %v has %d elements, more than the model's largest parameter (%d)", e.Name, ErrShapeMismatch, e.DType, e.Shape, n, largest)
		}
		total += memBytes(e)
		if total > modelBytes+1<<20 {
			return fmt.Errorf("tensor %q: %w: the adapters' tensors up to this one take %s, more than the model's %s", e.Name, ErrUnexpectedTensor, formatBytes(float64(total)), formatBytes(float64(modelBytes)))
		}
	}
	return nil
}

// readFileTensors reads entries (F32 or I64, as the caller checked) of the
// file h describes into new tensors on the default device, each allocated
// at its size (checked against the file's length by ReadFileHeader) and
// filled a chunk at a time; with finite, a NaN or an infinity is an error
// wrapping ErrNonFinite.
func readFileTensors(h *safetensors.FileHeader, entries []safetensors.Entry, finite bool) (StateDict, error) {
	r := safetensors.NewReaderSize(chunkBytes)
	defer r.Close()
	r.RequireFinite(finite)
	sd := StateDict{}
	for _, e := range entries {
		ref := h.Ref(e)
		if e.DType == "I64" {
			v := make([]int, 0, ref.N)
			if err := r.EachInt64(ref, func(_ int, c []int64) {
				for _, x := range c {
					v = append(v, int(x))
				}
			}); err != nil {
				return nil, trimmed{err, h.Path + ": "}
			}
			sd[e.Name] = tensor.FromInts(v, len(v)).Reshape(e.Shape...)
			continue
		}
		t := tensor.Zeros(e.Shape...)
		flat := t.Reshape(-1)
		if err := r.Each(ref, func(off int, v []float32) { flat.SetFloat32s(off, v) }); err != nil {
			return nil, trimmed{err, h.Path + ": "}
		}
		sd[e.Name] = t
	}
	return sd, nil
}

// readStreamTensors reads entries (F32 or I64, sorted by offset, as the
// caller checked) from r, positioned at the start of the data section,
// skipping the bytes of the tensors left out (unread where r is an
// io.Seeker). The length of a stream is
// not known beforehand, so each tensor's values are gathered in chunks as
// they arrive and its storage is allocated only once all of them have:
// data cut short cost no more than what arrived. With finite, a NaN or an
// infinity is an error wrapping ErrNonFinite.
func readStreamTensors(r io.Reader, entries []safetensors.Entry, finite bool) (StateDict, error) {
	sd := StateDict{}
	var pos int64
	raw := make([]byte, min(chunkBytes, maxChunk(entries)))
	for _, e := range entries {
		if e.Begin < pos {
			return nil, fmt.Errorf("tensor %q: %w: data_offsets overlap", e.Name, ErrCorruptHeader)
		}
		if err := skip(r, e.Begin-pos); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", e.Name, err)
		}
		pos = e.Begin
		size := 4
		if e.DType == "I64" {
			size = 8
		}
		n := e.NumElements()
		var floats [][]float32
		var ints []int
		for off := 0; off < n; {
			k := min(len(raw)/size, n-off)
			b := raw[:k*size]
			if _, err := io.ReadFull(r, b); err != nil {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					return nil, fmt.Errorf("tensor %q: %w: the data end inside it (element %d of %d)", e.Name, ErrTruncated, off, n)
				}
				return nil, fmt.Errorf("tensor %q: %w", e.Name, err)
			}
			pos += int64(len(b))
			if size == 8 {
				for i := range k {
					ints = append(ints, int(int64(binary.LittleEndian.Uint64(b[8*i:]))))
				}
			} else {
				v := make([]float32, k)
				safetensors.Decode(v, b, "F32")
				if finite {
					for i, x := range v {
						if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
							return nil, fmt.Errorf("tensor %q: %w: element %d is %v", e.Name, ErrNonFinite, off+i, x)
						}
					}
				}
				floats = append(floats, v)
			}
			off += k
		}
		if size == 8 {
			sd[e.Name] = tensor.FromInts(ints, n).Reshape(e.Shape...)
			continue
		}
		t := tensor.Zeros(e.Shape...)
		flat, off := t.Reshape(-1), 0
		for i, v := range floats {
			flat.SetFloat32s(off, v)
			off += len(v)
			floats[i] = nil
		}
		sd[e.Name] = t
	}
	return sd, nil
}

// skip advances r by n bytes: a seek where r can (a file: the bytes of the
// tensors left out are not read; data cut short show when the next
// tensor's are), else a read that discards them.
func skip(r io.Reader, n int64) error {
	if n == 0 {
		return nil
	}
	if s, ok := r.(io.Seeker); ok {
		_, err := s.Seek(n, io.SeekCurrent)
		return err
	}
	if got, err := io.CopyN(io.Discard, r, n); err != nil {
		return fmt.Errorf("%w: the data end %d bytes before it", ErrTruncated, n-got)
	}
	return nil
}

// maxChunk returns the bytes of the largest of entries, at least 8.
func maxChunk(entries []safetensors.Entry) int {
	n := int64(8)
	for _, e := range entries {
		n = max(n, e.End-e.Begin)
	}
	return int(min(n, math.MaxInt32))
}

// splitPrefix returns the entries whose names do not start with prefix,
// and those that do.
func splitPrefix(entries []safetensors.Entry, prefix string) (without, with []safetensors.Entry) {
	for _, e := range entries {
		if strings.HasPrefix(e.Name, prefix) {
			with = append(with, e)
		} else {
			without = append(without, e)
		}
	}
	return without, with
}

// withoutOptimizer returns entries without the optimizer's (those under
// OptimizerPrefix), and those apart.
func withoutOptimizer(entries []safetensors.Entry) (model, opt []safetensors.Entry) {
	return splitPrefix(entries, OptimizerPrefix)
}
