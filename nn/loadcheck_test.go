package nn_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// The loaders' bounds (issue #31, items 3 and 4): each test reproduces a
// file that used to exhaust memory and checks both the error and that
// refusing it allocated little. allocated counts every byte allocated
// (TotalAlloc, freed ones included), so it bounds the peak whatever the
// collector does.

// smallAlloc is the most a refusal may allocate: far below what the files
// below declare (8 GiB), and below the 200 MB the process must stay under.
const smallAlloc = 16 << 20

// allocated returns the bytes fn allocated on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// extraTensor is a tensor a test adds to a file's header with no data
// written: the file is extended (sparsely) to its length.
type extraTensor struct {
	name, dtype string
	shape       []int64
}

// huge is an F32 [2^31] tensor: 8 GiB, which the sparse file does not
// store.
var huge = extraTensor{"transformer.h.0.attn.extra", "F32", []int64{1 << 31}}

// writeSparse writes sd and metadata as a safetensors file, with extra
// tensors declared after sd's data and the file extended with
// os.File.Truncate up to their end, so that an 8 GiB tensor costs a few KB
// on disk.
func writeSparse(t *testing.T, sd nn.StateDict, meta map[string]string, extra ...extraTensor) string {
	t.Helper()
	hdr := map[string]any{}
	if meta != nil {
		hdr["__metadata__"] = meta
	}
	var data bytes.Buffer
	for _, n := range sd.Names() {
		x := sd[n]
		begin := data.Len()
		dt := "F32"
		if x.DType() == tensor.Int64 {
			dt = "I64"
			for _, v := range x.Ints() {
				binary.Write(&data, binary.LittleEndian, int64(v))
			}
		} else {
			for _, v := range x.Float32s() {
				binary.Write(&data, binary.LittleEndian, math.Float32bits(v))
			}
		}
		hdr[n] = map[string]any{"dtype": dt, "shape": append([]int{}, x.Shape()...), "data_offsets": []int{begin, data.Len()}}
	}
	end := int64(data.Len())
	for _, e := range extra {
		n := int64(1)
		for _, d := range e.shape {
			n *= d
		}
		size := n * map[string]int64{"F32": 4, "F16": 2, "I64": 8}[e.dtype]
		hdr[e.name] = map[string]any{"dtype": e.dtype, "shape": e.shape, "data_offsets": []int64{end, end + size}}
		end += size
	}
	h, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	path := filepath.Join(t.TempDir(), "sparse.safetensors")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.Write(f, binary.LittleEndian, uint64(len(h)))
	f.Write(h)
	f.Write(data.Bytes())
	if err := f.Truncate(8 + int64(len(h)) + end); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func boundsGPT() (*nn.GPT, nn.GPTConfig) {
	cfg := nn.GPTConfig{VocabSize: 10, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8}
	tensor.ManualSeed(1)
	return nn.NewGPT(cfg), cfg
}

// TestLoadFileRefusesUnexpectedUnread: a state dict with an extra F32
// [2^31] tensor (8 GiB, sparse) is refused by the tensor's name before any
// data is read, by LoadFile and by Load from a stream; LoadStateDictFile,
// which has no module to compare with, refuses it against the allocation
// limit; data cut short in a stream cost no more than what arrived.
func TestLoadFileRefusesUnexpectedUnread(t *testing.T) {
	m, _ := boundsGPT()
	path := writeSparse(t, nn.StateDictOf(m), nil, huge)
	var err error
	alloc := allocated(func() { err = nn.LoadFile(path, m) })
	if want := `nn: load ` + path + `: tensor "transformer.h.0.attn.extra": unexpected tensor: the model has no parameter of that name (the file's F32 [2147483648], not read)`; err == nil || err.Error() != want || !errors.Is(err, nn.ErrUnexpectedTensor) {
		t.Errorf("LoadFile: %v\nwant %s", err, want)
	}
	if alloc > smallAlloc {
		t.Errorf("LoadFile allocated %d bytes", alloc)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	alloc = allocated(func() { err = nn.Load(f, m) })
	if !errors.Is(err, nn.ErrUnexpectedTensor) || !strings.Contains(err.Error(), `"transformer.h.0.attn.extra"`) {
		t.Errorf("Load: %v", err)
	}
	if alloc > smallAlloc {
		t.Errorf("Load allocated %d bytes", alloc)
	}

	prev := tensor.SetMaxAllocBytes(1 << 30)
	alloc = allocated(func() { _, _, err = nn.LoadStateDictFile(path) })
	tensor.SetMaxAllocBytes(prev)
	if !errors.Is(err, nn.ErrTooLarge) || !strings.Contains(err.Error(), `"transformer.h.0.attn.extra"`) || !strings.Contains(err.Error(), "8 GiB") || strings.Contains(err.Error(), "\n") {
		t.Errorf("LoadStateDictFile under a 1 GiB limit: %v", err)
	}
	if alloc > smallAlloc {
		t.Errorf("LoadStateDictFile allocated %d bytes", alloc)
	}

	// A stream declaring 8 GiB of which 1 MiB arrives: an error, having
	// allocated about what arrived.
	sf, err := os.Open(writeSparse(t, nn.StateDict{}, nil, extraTensor{"x", "F32", []int64{1 << 31}}))
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	var lenBuf [8]byte
	if _, err := sf.ReadAt(lenBuf[:], 0); err != nil {
		t.Fatal(err)
	}
	stream := make([]byte, 8+int(binary.LittleEndian.Uint64(lenBuf[:]))+1<<20) // the header and 1 MiB of the data
	if _, err := sf.ReadAt(stream, 0); err != nil {
		t.Fatal(err)
	}
	alloc = allocated(func() { _, _, err = nn.ReadStateDict(bytes.NewReader(stream)) })
	if !errors.Is(err, nn.ErrTruncated) || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("ReadStateDict of a cut stream: %v", err)
	}
	if alloc > smallAlloc {
		t.Errorf("ReadStateDict of a cut stream allocated %d bytes", alloc)
	}
}

// trainCheckpointParts returns the tensors and metadata of a good train
// checkpoint of a tiny GPT, with an optimizer's state, for tests to
// change.
func trainCheckpointParts(t *testing.T) (nn.StateDict, map[string]string, nn.GPTConfig) {
	t.Helper()
	tok := tokenizer.NewChar([]byte("abcdefgh \n"))
	_, cfg := boundsGPT()
	sd, meta, err := nn.LoadStateDictFile(writeTrainCheckpoint(t, cfg, tok, nil))
	if err != nil {
		t.Fatal(err)
	}
	return sd, meta, cfg
}

// TestCheckpointBounded: a checkpoint's extra model tensor (8 GiB, sparse)
// is refused by name unread; an 8 GiB optimizer tensor is not read by
// LoadCheckpoint (it samples) and refused before reading by ReadCheckpoint
// (it resumes); a tokenizer of merges that double a token's length (1 KB
// standing for 32 GiB) is refused before it is built; a model above the
// allocation limit (train's --max_memory) is refused before it is built.
func TestCheckpointBounded(t *testing.T) {
	sd, meta, cfg := trainCheckpointParts(t)
	if len(sd.WithPrefix(nn.OptimizerPrefix)) == 0 {
		t.Fatal("the checkpoint holds no optimizer state")
	}
	check := func(name string, path string, read func(string) (*nn.Checkpoint, error), target error, want string) {
		t.Helper()
		var ck *nn.Checkpoint
		var err error
		alloc := allocated(func() { ck, err = read(path) })
		if target == nil {
			if err != nil || ck.LM == nil {
				t.Errorf("%s: %v", name, err)
			}
		} else if !errors.Is(err, target) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line wrapping %v naming %s", name, err, target, want)
		}
		if alloc > smallAlloc {
			t.Errorf("%s: allocated %d bytes", name, alloc)
		}
	}
	extra := writeSparse(t, sd, meta, huge)
	check("LoadCheckpoint, extra model tensor", extra, nn.LoadCheckpoint, nn.ErrUnexpectedTensor, `is corrupt: tensor "transformer.h.0.attn.extra": unexpected tensor`)
	check("ReadCheckpoint, extra model tensor", extra, nn.ReadCheckpoint, nn.ErrUnexpectedTensor, `is corrupt: tensor "transformer.h.0.attn.extra": unexpected tensor`)

	opt := writeSparse(t, sd, meta, extraTensor{"optimizer.state.9.exp_avg", "F32", []int64{1 << 31}})
	check("LoadCheckpoint, 8 GiB optimizer tensor", opt, nn.LoadCheckpoint, nil, "")
	check("ReadCheckpoint, 8 GiB optimizer tensor", opt, nn.ReadCheckpoint, nn.ErrShapeMismatch, `tensor "optimizer.state.9.exp_avg": shape mismatch: the optimizer's F32 [2147483648] has 2147483648 elements, more than the model's largest parameter`)

	// Optimizer tensors each no larger than a parameter, but many: more
	// than three times the model and 1 MiB in all.
	var many []extraTensor
	for i := range 1100 {
		many = append(many, extraTensor{fmt.Sprintf("optimizer.state.%d.exp_avg", 100+i), "F32", []int64{256}})
	}
	check("ReadCheckpoint, too much optimizer state", writeSparse(t, sd, meta, many...), nn.ReadCheckpoint, nn.ErrUnexpectedTensor, "more than three times the model's")

	// The tokenizer bomb, with a model of its vocabulary (290 ids).
	merges := [][2]int{{0, 0}}
	for i := range 33 {
		merges = append(merges, [2]int{256 + i, 256 + i})
	}
	bomb, _ := json.Marshal(map[string]any{"kind": "bpe", "merges": merges})
	bcfg := cfg
	bcfg.VocabSize = 290
	tensor.ManualSeed(1)
	bsd := nn.StateDictOf(nn.NewGPT(bcfg))
	rec, _ := json.Marshal(map[string]any{"iter": 1, "model_args": bcfg, "tokenizer": json.RawMessage(bomb)})
	bombPath := writeSparse(t, bsd, map[string]string{nn.MetaFormat: nn.TrainCheckpointFormat, nn.MetaTrain: string(rec)})
	for _, read := range []func(string) (*nn.Checkpoint, error){nn.LoadCheckpoint, nn.ReadCheckpoint} {
		var err error
		alloc := allocated(func() { _, err = read(bombPath) })
		if err == nil || !strings.Contains(err.Error(), "a token may have") {
			t.Errorf("tokenizer bomb: %v", err)
		}
		if alloc > smallAlloc {
			t.Errorf("tokenizer bomb: allocated %d bytes", alloc)
		}
	}

	// A model above the allocation limit, as train's --max_memory sets it.
	good := writeSparse(t, sd, meta)
	prev := tensor.SetMaxAllocBytes(1 << 10)
	_, err := nn.LoadCheckpoint(good)
	_, err2 := nn.ReadCheckpoint(good)
	tensor.SetMaxAllocBytes(prev)
	for _, err := range []error{err, err2} {
		if !errors.Is(err, nn.ErrTooLarge) || !strings.Contains(err.Error(), "a GPT of vocab_size 10, block_size 8, n_layer 1, n_head 2, n_embd 8 has") || !strings.Contains(err.Error(), "above the allocation limit of 1 KiB") {
			t.Errorf("a checkpoint under a 1 KiB limit: %v", err)
		}
	}
	// The model fits but not the model and its optimizer's state.
	prev = tensor.SetMaxAllocBytes(4*cfg.NumParams() + 64)
	_, err = nn.ReadCheckpoint(good)
	_, err2 = nn.LoadCheckpoint(good)
	tensor.SetMaxAllocBytes(prev)
	if !errors.Is(err, nn.ErrTooLarge) || !strings.Contains(err.Error(), "tensors to read") {
		t.Errorf("ReadCheckpoint of a model and its optimizer state above the limit: %v", err)
	}
	if err2 != nil {
		t.Errorf("LoadCheckpoint, which reads no optimizer state, under the same limit: %v", err2)
	}
	ck, err := nn.LoadCheckpoint(good)
	if err != nil {
		t.Fatalf("LoadCheckpoint of the good checkpoint: %v", err)
	}
	for _, p := range ck.Model.NamedParameters() {
		if !slicesEqualBits(p.Param.Float32s(), sd[p.Name].Float32s()) {
			t.Errorf("LoadCheckpoint: %s differs from the file's", p.Name)
		}
	}
}

func slicesEqualBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestLlamaCheckpointBounded: a Llama-family checkpoint with an extra
// 8 GiB tensor is refused by name unread, by LoadCheckpoint and
// ReadCheckpoint, and one with an 8 GiB optimizer tensor samples.
func TestLlamaCheckpointBounded(t *testing.T) {
	cfg := nn.LlamaConfig{ModelType: "llama", VocabSize: 12, HiddenSize: 8, IntermediateSize: 16, NumHiddenLayers: 1,
		NumAttentionHeads: 2, NumKeyValueHeads: 1, HeadDim: 4, MaxPositionEmbeddings: 16, RMSNormEps: 1e-5, RopeTheta: 10000, TieWordEmbeddings: true}
	tensor.ManualSeed(1)
	model := nn.NewLlama(cfg)
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := nn.SaveCheckpoint(path, &nn.Checkpoint{LM: model, Tokenizer: tokenizer.NewChar([]byte("abcdefgh \n")), Iter: 1}); err != nil {
		t.Fatal(err)
	}
	sd, meta, err := nn.LoadStateDictFile(path)
	if err != nil {
		t.Fatal(err)
	}
	extra := writeSparse(t, sd, meta, extraTensor{"model.layers.0.mlp.extra", "F32", []int64{1 << 31}})
	for _, read := range []func(string) (*nn.Checkpoint, error){nn.LoadCheckpoint, nn.ReadCheckpoint} {
		var err error
		alloc := allocated(func() { _, err = read(extra) })
		if !errors.Is(err, nn.ErrUnexpectedTensor) || !strings.Contains(err.Error(), `tensor "model.layers.0.mlp.extra": unexpected tensor`) {
			t.Errorf("extra Llama tensor: %v", err)
		}
		if alloc > smallAlloc {
			t.Errorf("extra Llama tensor: allocated %d bytes", alloc)
		}
	}
	opt := writeSparse(t, sd, meta, extraTensor{"optimizer.state.0.exp_avg", "F32", []int64{1 << 31}})
	var ck *nn.Checkpoint
	alloc := allocated(func() { ck, err = nn.LoadCheckpoint(opt) })
	if err != nil || ck.LM == nil || ck.Model != nil {
		t.Fatalf("LoadCheckpoint with an 8 GiB optimizer tensor: %v", err)
	}
	if alloc > smallAlloc {
		t.Errorf("LoadCheckpoint with an 8 GiB optimizer tensor: allocated %d bytes", alloc)
	}
	for _, p := range ck.LM.NamedParameters() {
		if !slicesEqualBits(p.Param.Float32s(), sd[p.Name].Float32s()) {
			t.Errorf("LoadCheckpoint: %s differs from the file's", p.Name)
		}
	}
	if _, err := nn.ReadCheckpoint(opt); !errors.Is(err, nn.ErrShapeMismatch) || !strings.Contains(err.Error(), `"optimizer.state.0.exp_avg"`) {
		t.Errorf("ReadCheckpoint with an 8 GiB optimizer tensor: %v", err)
	}
}

// TestTargetsMatchModels: the parameter lists computed from a config,
// which a checkpoint is checked against before its model is built, are
// those of the models built from the config, name for name and shape for
// shape.
func TestTargetsMatchModels(t *testing.T) {
	for _, cfg := range []nn.GPTConfig{
		{VocabSize: 10, BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 8},
		{VocabSize: 10, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8, Bias: true},
	} {
		names, shapes := nn.GPTTargetForTest(cfg)
		compareTarget(t, "GPT", names, shapes, nn.NewGPT(cfg))
	}
	base := nn.LlamaConfig{ModelType: "llama", VocabSize: 12, HiddenSize: 8, IntermediateSize: 16, NumHiddenLayers: 2,
		NumAttentionHeads: 2, NumKeyValueHeads: 1, HeadDim: 4, MaxPositionEmbeddings: 16, RMSNormEps: 1e-5, RopeTheta: 10000}
	tied := base
	tied.TieWordEmbeddings = true
	biased := base
	biased.QKVBias, biased.OBias, biased.MLPBias = true, true, true
	qwen3 := base
	qwen3.ModelType, qwen3.QKNorm, qwen3.HeadDim = "qwen3", true, 8
	for _, cfg := range []nn.LlamaConfig{base, tied, biased, qwen3} {
		names, shapes := nn.LlamaTargetForTest(cfg)
		compareTarget(t, cfg.ModelType, names, shapes, nn.NewLlama(cfg))
	}
}

func compareTarget(t *testing.T, what string, names []string, shapes [][]int, m nn.Module) {
	t.Helper()
	ps := m.NamedParameters()
	if len(ps) != len(names) {
		t.Fatalf("%s: %d parameters from the config, the model has %d", what, len(names), len(ps))
	}
	for i, p := range ps {
		if p.Name != names[i] || !slicesEqualInts(p.Param.Shape(), shapes[i]) {
			t.Errorf("%s: parameter %d is %s %v, the config's list says %s %v", what, i, p.Name, p.Param.Shape(), names[i], shapes[i])
		}
	}
}

func slicesEqualInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestNonFiniteWeights: a NaN or an infinity among the weights is an error
// naming the file, the tensor and the element for every loader of models,
// while LoadStateDictFile and LoadStateDict, which do not judge values,
// read them as they are.
func TestNonFiniteWeights(t *testing.T) {
	sd, meta, _ := trainCheckpointParts(t)
	w := sd["transformer.h.0.mlp.c_fc.weight"].Float32s()
	w[7] = float32(math.NaN())
	sd["transformer.h.0.mlp.c_fc.weight"] = tensor.New(w, sd["transformer.h.0.mlp.c_fc.weight"].Shape()...)
	ckpt := writeSparse(t, sd, meta)
	want := `tensor "transformer.h.0.mlp.c_fc.weight": non-finite value: element 7 is NaN`
	for name, read := range map[string]func(string) (*nn.Checkpoint, error){"LoadCheckpoint": nn.LoadCheckpoint, "ReadCheckpoint": nn.ReadCheckpoint} {
		if _, err := read(ckpt); !errors.Is(err, nn.ErrNonFinite) || !strings.Contains(err.Error(), ckpt) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	m, _ := boundsGPT()
	before := snapshot(m)
	plain := writeSparse(t, sd.WithoutPrefix(nn.OptimizerPrefix), nil)
	if err := nn.LoadFile(plain, m); !errors.Is(err, nn.ErrNonFinite) || err.Error() != "nn: load "+plain+": "+want {
		t.Errorf("LoadFile: %v", err)
	}
	b, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.Load(bytes.NewReader(b), m); !errors.Is(err, nn.ErrNonFinite) || !strings.Contains(err.Error(), want) {
		t.Errorf("Load: %v", err)
	}
	if !equalSnapshots(before, snapshot(m)) {
		t.Error("the model changed although loading failed")
	}
	raw, _, err := nn.LoadStateDictFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.LoadStateDict(m, raw); err != nil {
		t.Errorf("LoadStateDict of the values as they are: %v", err)
	}
	if v := m.H[0].MLP.CFc.Weight.Float32s()[7]; !math.IsNaN(float64(v)) {
		t.Errorf("element 7 is %v after LoadStateDict, want NaN", v)
	}

	// Hugging Face directories: GPT-2 (sharded) and a Llama.
	dir := t.TempDir()
	writeHubModel(t, dir, 16, 8, 1, 8, "F32", 2)
	if _, err := nn.LoadPretrained(dir); err != nil {
		t.Fatal(err)
	}
	wpath := poisonTensor(t, dir, "ln_f.weight", 1, float32(math.Inf(1)))
	if _, err := nn.LoadPretrained(dir); !errors.Is(err, nn.ErrNonFinite) || !strings.Contains(err.Error(), wpath+`: tensor "ln_f.weight": non-finite value: element 1 is +Inf`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("LoadPretrained: %v", err)
	}
	ldir := badLlamaDir(t, nil, nil)
	if _, err := nn.LoadCausalLM(ldir); err != nil {
		t.Fatal(err)
	}
	wpath = poisonTensor(t, ldir, "model.norm.weight", 3, float32(math.NaN()))
	if _, err := nn.LoadCausalLM(ldir); !errors.Is(err, nn.ErrNonFinite) || !strings.Contains(err.Error(), wpath+`: tensor "model.norm.weight": non-finite value: element 3 is NaN`) {
		t.Errorf("LoadCausalLM: %v", err)
	}
}

// poisonTensor sets element i of the F32 tensor name, in whichever
// safetensors file of dir holds it, to v, and returns that file's path.
func poisonTensor(t *testing.T, dir, name string, i int, v float32) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	for _, wpath := range files {
		b, err := os.ReadFile(wpath)
		if err != nil {
			t.Fatal(err)
		}
		var hdr map[string]json.RawMessage
		hlen := binary.LittleEndian.Uint64(b)
		if err := json.Unmarshal(b[8:8+hlen], &hdr); err != nil {
			t.Fatal(err)
		}
		raw, ok := hdr[name]
		if !ok {
			continue
		}
		var e struct {
			DType   string `json:"dtype"`
			Offsets []int  `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &e); err != nil || e.DType != "F32" {
			t.Fatalf("%s: %s: %v %s", wpath, name, err, e.DType)
		}
		binary.LittleEndian.PutUint32(b[8+int(hlen)+e.Offsets[0]+4*i:], math.Float32bits(v))
		if err := os.WriteFile(wpath, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return wpath
	}
	t.Fatalf("no file of %s holds %s", dir, name)
	return ""
}

// TestPretrainedExtraTensorUnread: a hub directory whose weights hold an
// extra 8 GiB tensor (sparse; in the second shard of a GPT-2, and in a
// Llama's file) is refused by the tensor's name before any weight is read.
func TestPretrainedExtraTensorUnread(t *testing.T) {
	dir := t.TempDir()
	writeHubModel(t, dir, 16, 8, 1, 8, "F32", 2)
	shard := appendSparseTensor(t, filepath.Join(dir, "model-00002-of-00002.safetensors"), "h.0.attn.extra")
	var err error
	alloc := allocated(func() { _, err = nn.LoadPretrained(dir) })
	if !errors.Is(err, nn.ErrUnexpectedTensor) || !strings.Contains(err.Error(), shard+`: tensor "h.0.attn.extra": unexpected tensor`) {
		t.Errorf("LoadPretrained: %v", err)
	}
	if alloc > smallAlloc {
		t.Errorf("LoadPretrained allocated %d bytes", alloc)
	}
	ldir := badLlamaDir(t, nil, nil)
	lfile := appendSparseTensor(t, filepath.Join(ldir, "model.safetensors"), "model.layers.0.mlp.extra")
	alloc = allocated(func() { _, err = nn.LoadCausalLM(ldir) })
	if !errors.Is(err, nn.ErrUnexpectedTensor) || !strings.Contains(err.Error(), lfile+`: tensor "model.layers.0.mlp.extra": unexpected tensor`) {
		t.Errorf("LoadCausalLM: %v", err)
	}
	if alloc > smallAlloc {
		t.Errorf("LoadCausalLM allocated %d bytes", alloc)
	}
}

// appendSparseTensor rewrites the safetensors file at path with an extra
// F32 [2^31] tensor named name declared after its data, the file extended
// sparsely to cover it, and returns path.
func appendSparseTensor(t *testing.T, path, name string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hlen := binary.LittleEndian.Uint64(b)
	var hdr map[string]any
	if err := json.Unmarshal(b[8:8+hlen], &hdr); err != nil {
		t.Fatal(err)
	}
	data := b[8+hlen:]
	end := int64(len(data))
	hdr[name] = map[string]any{"dtype": "F32", "shape": []int64{1 << 31}, "data_offsets": []int64{end, end + 4<<31}}
	h, _ := json.Marshal(hdr)
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, uint64(len(h)))
	out.Write(h)
	out.Write(data)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(out.Len())+4<<31); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadStateDictNil (issue #31, item 11): a nil tensor in a state dict
// is an error naming it, not a nil dereference.
func TestLoadStateDictNil(t *testing.T) {
	m, _ := boundsGPT()
	before := snapshot(m)
	sd := nn.StateDictOf(m)
	sd["transformer.wpe.weight"] = nil
	sd["lm_head.weight"] = nil
	err := nn.LoadStateDict(m, sd)
	if !errors.Is(err, nn.ErrMissingTensor) || !strings.Contains(err.Error(), `tensor "transformer.wpe.weight": missing tensor: the state dict holds nil under its name (model needs shape [8 8])`) || !strings.Contains(err.Error(), `tensor "lm_head.weight": missing tensor: the state dict holds nil`) {
		t.Errorf("LoadStateDict with nil tensors: %v", err)
	}
	if !equalSnapshots(before, snapshot(m)) {
		t.Error("the model changed although LoadStateDict failed")
	}
}

// TestLoadPretrainedHugeConfig (issue #31, item 2): a GPT-2 config.json
// that describes a model far beyond the allocation limit, with one small
// layer of weights, is an error naming the sizes and config.json,
// returned before anything is built or read: it was an out-of-memory kill
// for n_layer 1e9 and a goroutine trace for the others.
func TestLoadPretrainedHugeConfig(t *testing.T) {
	for _, tt := range []struct{ key, value, want string }{
		{"n_layer", "1000000000", "n_layer 1000000000"},
		{"vocab_size", "2147483648", "vocab_size 2147483648"},
		{"n_positions", "1000000000", "block_size 1000000000"},
		{"n_embd", "1000000", "n_embd 1000000"},
	} {
		dir := t.TempDir()
		writeHubModel(t, dir, 16, 8, 1, 8, "F32", 1)
		cpath := filepath.Join(dir, "config.json")
		var c map[string]any
		b, err := os.ReadFile(cpath)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		c[tt.key] = json.RawMessage(tt.value)
		if tt.key == "n_embd" {
			c["n_head"] = 4
		}
		b, _ = json.Marshal(c)
		if err := os.WriteFile(cpath, b, 0o644); err != nil {
			t.Fatal(err)
		}
		alloc := allocated(func() {
			if perr := tensor.Catch(func() { _, err = nn.LoadPretrained(dir) }); perr != nil {
				t.Errorf("%s %s: LoadPretrained panicked: %v", tt.key, tt.value, perr)
			}
		})
		if !errors.Is(err, nn.ErrTooLarge) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), cpath) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %s: %v", tt.key, tt.value, err)
		}
		if alloc > smallAlloc {
			t.Errorf("%s %s: allocated %d bytes", tt.key, tt.value, alloc)
		}
	}
}

// TestNewGPTTooLarge (issue #31, item 2): NewGPT of n_layer 1e9 panics
// with a *tensor.Error naming the sizes before allocating anything (it was
// an out-of-memory kill), and NumParams counts what NewGPT builds.
func TestNewGPTTooLarge(t *testing.T) {
	cfg := nn.GPTConfig{VocabSize: 10, BlockSize: 8, NLayer: 1_000_000_000, NHead: 2, NEmbd: 8}
	var perr error
	alloc := allocated(func() { perr = tensor.Catch(func() { nn.NewGPT(cfg) }) })
	var te *tensor.Error
	if !errors.As(perr, &te) || te.Op != "NewGPT" || !strings.Contains(perr.Error(), "n_layer 1000000000") || !strings.Contains(perr.Error(), "above the allocation limit") {
		t.Errorf("NewGPT of n_layer 1e9: %v", perr)
	}
	if alloc > smallAlloc {
		t.Errorf("NewGPT of n_layer 1e9 allocated %d bytes", alloc)
	}
	for _, cfg := range []nn.GPTConfig{
		{VocabSize: 10, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8},
		{VocabSize: 65, BlockSize: 16, NLayer: 3, NHead: 4, NEmbd: 16, Bias: true},
	} {
		if got, want := cfg.NumParams(), int64(nn.NumParams(nn.NewGPT(cfg))); got != want {
			t.Errorf("%+v: NumParams %d, NewGPT has %d", cfg, got, want)
		}
	}
}

// TestForwardEmptySequence (issue #31, item 11): GPT.Forward and Loss of a
// [1, 0] input panic with a *tensor.Error naming the op and the shape
// (they panicked with "slice bounds out of range").
func TestForwardEmptySequence(t *testing.T) {
	m, _ := boundsGPT()
	empty := tensor.FromInts(nil, 1, 0)
	for name, fn := range map[string]func(){
		"GPT.Forward": func() { m.Forward(empty) },
		"GPT.Loss":    func() { m.Loss(empty, empty) },
	} {
		err := tensor.Catch(fn)
		var te *tensor.Error
		if !errors.As(err, &te) || !strings.Contains(err.Error(), "[1 0]") {
			t.Errorf("%s of a [1, 0] input: %v, want a *tensor.Error naming the shape", name, err)
		}
	}
}

// TestLoadStreamSkipsOptimizer: Load of a train checkpoint from a stream
// that seeks (a file) skips an 8 GiB optimizer tensor whose data come
// before the model's (as in train's files, where names sort so) without
// reading it, and reads the model's tensors after it.
func TestLoadStreamSkipsOptimizer(t *testing.T) {
	sd, meta, _ := trainCheckpointParts(t)
	// the optimizer tensor's 8 GiB (a hole in the file) first, then the
	// model's tensors
	const big = 4 << 31
	hdr := map[string]any{"__metadata__": meta, "optimizer.state.0.big": map[string]any{"dtype": "F32", "shape": []int64{1 << 31}, "data_offsets": []int64{0, big}}}
	var data bytes.Buffer
	for _, n := range sd.WithoutPrefix(nn.OptimizerPrefix).Names() {
		begin := big + int64(data.Len())
		for _, v := range sd[n].Float32s() {
			binary.Write(&data, binary.LittleEndian, math.Float32bits(v))
		}
		hdr[n] = map[string]any{"dtype": "F32", "shape": sd[n].Shape(), "data_offsets": []int64{begin, big + int64(data.Len())}}
	}
	h, _ := json.Marshal(hdr)
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.Write(w, binary.LittleEndian, uint64(len(h)))
	w.Write(h)
	if _, err := w.WriteAt(data.Bytes(), 8+int64(len(h))+big); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, _ := boundsGPT()
	cr := &countingReader{f: f}
	alloc := allocated(func() { err = nn.Load(cr, m) })
	if err != nil {
		t.Fatal(err)
	}
	if alloc > smallAlloc {
		t.Errorf("Load allocated %d bytes", alloc)
	}
	if cr.n > 1<<20 {
		t.Errorf("Load read %d bytes of a file of %d bytes of model data", cr.n, data.Len())
	}
	for _, p := range m.NamedParameters() {
		if !slicesEqualBits(p.Param.Float32s(), sd[p.Name].Float32s()) {
			t.Errorf("Load: %s differs from the file's", p.Name)
		}
	}
}

// countingReader is a file as an io.ReadSeeker that counts the bytes read.
type countingReader struct {
	f *os.File
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.f.Read(b)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Seek(off int64, whence int) (int64, error) { return c.f.Seek(off, whence) }

// TestLoRACheckpointBounded: a LoRA run's checkpoint with an extra 8 GiB
// adapter tensor (sparse) is refused by LoadCheckpoint and ReadCheckpoint
// by name before anything is read; the checkpoint without it loads with
// its adapters applied.
func TestLoRACheckpointBounded(t *testing.T) {
	cfg := nn.LlamaConfig{ModelType: "llama", VocabSize: 12, HiddenSize: 8, IntermediateSize: 16, NumHiddenLayers: 1,
		NumAttentionHeads: 2, NumKeyValueHeads: 1, HeadDim: 4, MaxPositionEmbeddings: 16, RMSNormEps: 1e-5, RopeTheta: 10000}
	model := nn.NewLlamaWith(cfg, tensor.NewGenerator(1))
	lora, err := nn.ApplyLoRA(model, nn.LoRAConfig{R: 2, Alpha: 4, TargetModules: []string{"q_proj"}, Gen: tensor.NewGenerator(2)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := nn.SaveCheckpoint(path, &nn.Checkpoint{LM: model, Adapter: lora, Tokenizer: tokenizer.NewChar([]byte("abcdefgh \n")), Iter: 1}); err != nil {
		t.Fatal(err)
	}
	ck, err := nn.LoadCheckpoint(path)
	if err != nil || ck.Adapter == nil {
		t.Fatalf("LoadCheckpoint of the LoRA checkpoint: %v (checkpoint %+v)", err, ck)
	}
	sd, meta, err := nn.LoadStateDictFile(path)
	if err != nil {
		t.Fatal(err)
	}
	big := writeSparse(t, sd, meta, extraTensor{nn.AdapterPrefix + "model.layers.0.self_attn.q_proj.lora_A.extra", "F32", []int64{1 << 31}})
	for name, read := range map[string]func(string) (*nn.Checkpoint, error){"LoadCheckpoint": nn.LoadCheckpoint, "ReadCheckpoint": nn.ReadCheckpoint} {
		var err error
		alloc := allocated(func() { _, err = read(big) })
		if !errors.Is(err, nn.ErrShapeMismatch) || !strings.Contains(err.Error(), `lora_A.extra": shape mismatch: the adapter's F32 [2147483648]`) {
			t.Errorf("%s with an 8 GiB adapter tensor: %v", name, err)
		}
		if alloc > smallAlloc {
			t.Errorf("%s with an 8 GiB adapter tensor: allocated %d bytes", name, alloc)
		}
	}
}
