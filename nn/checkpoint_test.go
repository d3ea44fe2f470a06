package nn_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

var tinyCfg = nn.GPTConfig{VocabSize: 7, BlockSize: 4, NLayer: 2, NHead: 2, NEmbd: 4, Bias: true}

func newTiny(seed uint64) *nn.GPT {
	tensor.ManualSeed(seed)
	return nn.NewGPT(tinyCfg)
}

// snapshot returns the bits of every parameter of m.
func snapshot(m nn.Module) map[string][]uint32 {
	out := map[string][]uint32{}
	for _, p := range m.NamedParameters() {
		for _, v := range p.Param.Float32s() {
			out[p.Name] = append(out[p.Name], math.Float32bits(v))
		}
	}
	return out
}

func equalSnapshots(a, b map[string][]uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func TestCheckpointRoundTripIsBitwise(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	m1 := newTiny(1)
	if err := nn.SaveFile(path, m1); err != nil {
		t.Fatal(err)
	}
	m2 := newTiny(2)
	if equalSnapshots(snapshot(m1), snapshot(m2)) {
		t.Fatal("two seeds gave the same model")
	}
	if err := nn.LoadFile(path, m2); err != nil {
		t.Fatal(err)
	}
	if !equalSnapshots(snapshot(m1), snapshot(m2)) {
		t.Fatal("loaded parameters differ from saved ones")
	}
	// the tie survives loading
	if m2.LmHead.Weight != m2.Wte.Weight {
		t.Fatal("lm_head.weight is no longer wte's weight")
	}
	// saving again gives the same bytes
	var b1, b2 bytes.Buffer
	if err := nn.Save(&b1, m1); err != nil {
		t.Fatal(err)
	}
	if err := nn.Save(&b2, m2); err != nil {
		t.Fatal(err)
	}
	file, _ := os.ReadFile(path)
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) || !bytes.Equal(b1.Bytes(), file) {
		t.Fatal("saving the loaded model gives different bytes")
	}
	// the file holds nanoGPT's names, including the tied lm_head.weight
	sd, _, err := nn.LoadStateDictFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"transformer.wte.weight", "transformer.wpe.weight", "transformer.h.1.attn.c_attn.weight", "transformer.h.0.mlp.c_proj.bias", "transformer.ln_f.bias", "lm_head.weight"} {
		if _, ok := sd[name]; !ok {
			t.Errorf("file lacks %q; has %v", name, sd.Names())
		}
	}
	// no temporary files are left behind
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after SaveFile, want 1", len(entries))
	}
}

func TestStateDictStreamRoundTrip(t *testing.T) {
	sd := nn.StateDict{
		"a":      tensor.New([]float32{1, float32(math.Inf(-1)), -0.0, 3.5e-38, float32(math.NaN()), 6}, 2, 3),
		"b.step": tensor.FromInts([]int{42}, 1).Reshape(),
		"c":      tensor.FromInts([]int{-1, 1 << 40, 7}, 3),
		"empty":  tensor.Zeros(0, 4),
		"scalar": tensor.Scalar(2.5),
	}
	meta := map[string]string{"format": "pt", "config": `{"n_layer": 2}`}
	var buf bytes.Buffer
	if err := nn.WriteStateDict(&buf, sd, meta); err != nil {
		t.Fatal(err)
	}
	hlen := binary.LittleEndian.Uint64(buf.Bytes()[:8])
	if hlen%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", hlen)
	}
	got, gotMeta, err := nn.ReadStateDict(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(gotMeta) != fmt.Sprint(meta) {
		t.Errorf("metadata %v, want %v", gotMeta, meta)
	}
	if !slices.Equal(got.Names(), sd.Names()) {
		t.Fatalf("names %v, want %v", got.Names(), sd.Names())
	}
	for _, n := range sd.Names() {
		w, g := sd[n], got[n]
		if g.DType() != w.DType() || !slices.Equal(g.Shape(), w.Shape()) {
			t.Errorf("%s: %s%v, want %s%v", n, g.DType(), g.Shape(), w.DType(), w.Shape())
			continue
		}
		if w.DType() == tensor.Int64 {
			if !slices.Equal(g.Ints(), w.Ints()) {
				t.Errorf("%s: %v, want %v", n, g.Ints(), w.Ints())
			}
			continue
		}
		for i, v := range w.Float32s() {
			if math.Float32bits(g.Float32s()[i]) != math.Float32bits(v) {
				t.Errorf("%s[%d]: %v, want %v", n, i, g.Float32s()[i], v)
			}
		}
	}
}

// rawFile assembles a safetensors file from a header and data.
func rawFile(header string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

func saved(t *testing.T, sd nn.StateDict) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := nn.WriteStateDict(&b, sd, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestLoadRejectsBadFiles(t *testing.T) {
	other := newTiny(9)
	good := nn.StateDictOf(other)
	goodBytes := saved(t, good)
	hlen := int(binary.LittleEndian.Uint64(goodBytes[:8]))
	with := func(edit func(sd nn.StateDict)) []byte {
		sd := nn.StateDict{}
		for k, v := range good {
			sd[k] = v
		}
		edit(sd)
		return saved(t, sd)
	}
	cases := []struct {
		name   string
		file   []byte
		err    error
		tensor string // the tensor the message must name, if any
	}{
		{"empty file", nil, nn.ErrTruncated, ""},
		{"truncated length", goodBytes[:5], nn.ErrTruncated, ""},
		{"truncated header", goodBytes[:8+hlen/2], nn.ErrTruncated, ""},
		{"truncated data", goodBytes[:len(goodBytes)-3], nn.ErrTruncated, "transformer.wte.weight"},
		{"header not JSON", rawFile(`{"a": nonsense}`, nil), nn.ErrCorruptHeader, ""},
		{"header not an object", rawFile(`[1, 2]  `, nil), nn.ErrCorruptHeader, ""},
		{"garbage after header", rawFile(`{} xx`, nil), nn.ErrCorruptHeader, ""},
		{"huge header length", append(binary.LittleEndian.AppendUint64(nil, 1<<40), '{', '}'), nn.ErrCorruptHeader, ""},
		{"missing data_offsets", rawFile(`{"x":{"dtype":"F32","shape":[1]}}`, make([]byte, 4)), nn.ErrCorruptHeader, "x"},
		{"unknown field", rawFile(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1}}`, make([]byte, 4)), nn.ErrCorruptHeader, "x"},
		{"unknown dtype", rawFile(`{"x":{"dtype":"F31","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), nn.ErrCorruptHeader, "x"},
		{"offsets disagree with shape", rawFile(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 8)), nn.ErrCorruptHeader, "x"},
		{"negative dimension", rawFile(`{"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, make([]byte, 4)), nn.ErrCorruptHeader, "x"},
		{"overlapping tensors", rawFile(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)), nn.ErrCorruptHeader, "y"},
		{"duplicate name", rawFile(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)), nn.ErrCorruptHeader, "x"},
		{"bad metadata", rawFile(`{"__metadata__":{"a":1}}`, nil), nn.ErrCorruptHeader, ""},
		{"unsupported dtype", rawFile(`{"transformer.wte.weight":{"dtype":"F16","shape":[7,4],"data_offsets":[0,56]}}`, make([]byte, 56)), nn.ErrDTypeMismatch, "transformer.wte.weight"},
		{"missing tensor", with(func(sd nn.StateDict) { delete(sd, "transformer.h.1.mlp.c_fc.bias") }), nn.ErrMissingTensor, "transformer.h.1.mlp.c_fc.bias"},
		{"extra tensor", with(func(sd nn.StateDict) { sd["transformer.h.2.ln_1.weight"] = tensor.Ones(4) }), nn.ErrUnexpectedTensor, "transformer.h.2.ln_1.weight"},
		{"wrong shape", with(func(sd nn.StateDict) { sd["transformer.h.0.attn.c_attn.weight"] = tensor.Zeros(4, 12) }), nn.ErrShapeMismatch, "transformer.h.0.attn.c_attn.weight"},
		{"wrong shape of tied head", with(func(sd nn.StateDict) { sd["lm_head.weight"] = tensor.Zeros(8, 4) }), nn.ErrShapeMismatch, "lm_head.weight"},
		{"wrong dtype", with(func(sd nn.StateDict) { sd["transformer.ln_f.bias"] = tensor.FromInts([]int{0, 0, 0, 0}) }), nn.ErrDTypeMismatch, "transformer.ln_f.bias"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newTiny(3)
			before := snapshot(m)
			err := nn.Load(bytes.NewReader(c.file), m)
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			if !errors.Is(err, c.err) {
				t.Errorf("error %q does not wrap %q", err, c.err)
			}
			if c.tensor != "" && !strings.Contains(err.Error(), `"`+c.tensor+`"`) {
				t.Errorf("error %q does not name tensor %q", err, c.tensor)
			}
			if !equalSnapshots(before, snapshot(m)) {
				t.Error("the model changed although loading failed")
			}
			// the same through a file, whose name the error carries
			path := filepath.Join(t.TempDir(), "bad.safetensors")
			os.WriteFile(path, c.file, 0o644)
			if err := nn.LoadFile(path, m); err == nil || !errors.Is(err, c.err) || !strings.Contains(err.Error(), path) {
				t.Errorf("LoadFile: %v", err)
			}
		})
	}
}

func TestLoadAcceptsNanoGPTVariants(t *testing.T) {
	src := newTiny(4)
	want := snapshot(src)
	base := nn.StateDictOf(src)
	variants := map[string]func(sd nn.StateDict){
		"with lm_head":    func(nn.StateDict) {},
		"without lm_head": func(sd nn.StateDict) { delete(sd, "lm_head.weight") },
		"with mask buffers": func(sd nn.StateDict) {
			for i := range tinyCfg.NLayer {
				sd[fmt.Sprintf("transformer.h.%d.attn.bias", i)] = tensor.Ones(4, 4).Tril(0).Reshape(1, 1, 4, 4)
			}
		},
	}
	for name, edit := range variants {
		t.Run(name, func(t *testing.T) {
			sd := nn.StateDict{}
			for k, v := range base {
				sd[k] = v
			}
			edit(sd)
			m := newTiny(5)
			if err := nn.Load(bytes.NewReader(saved(t, sd)), m); err != nil {
				t.Fatal(err)
			}
			if !equalSnapshots(want, snapshot(m)) {
				t.Error("loaded parameters differ")
			}
		})
	}
}

// TestSaveStateDictFileKeepsOldFileOnError checks that a save that fails
// after its temporary file exists (a nil tensor) leaves the old checkpoint
// whole, no temporary file behind, and says which file it was writing.
func TestSaveStateDictFileKeepsOldFileOnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	sd := nn.StateDictOf(newTiny(1))
	if err := nn.SaveStateDictFile(path, sd, nil); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := nn.StateDict{"a": tensor.Ones(2), "b": nil}
	err = nn.SaveStateDictFile(path, bad, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "nn: write "+path+": ") {
		t.Fatalf("error %v, want one that starts nn: write %s: ", err, path)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, old) {
		t.Error("the file changed after a failed save")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the directory, want 1 (temporary file left behind?)", len(entries))
	}
}

// FuzzLoad feeds arbitrary bytes to the loader: it must never panic, must
// leave the model unchanged when it fails, and what it accepts must survive
// a write and read unchanged.
func FuzzLoad(f *testing.F) {
	m := newTiny(1)
	var good bytes.Buffer
	nn.Save(&good, m)
	f.Add(good.Bytes())
	f.Add(good.Bytes()[:good.Len()/2])
	f.Add(rawFile(`{"__metadata__":{"a":"b"},"x":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}}`, make([]byte, 16)))
	f.Add(rawFile(`{"x":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"y":{"dtype":"F32","shape":[0,3],"data_offsets":[4,4]}}`, make([]byte, 4)))
	f.Add(rawFile(`{}`, nil))
	f.Add([]byte{})
	model := newTiny(2)
	f.Fuzz(func(t *testing.T, data []byte) {
		before := snapshot(model)
		if err := nn.Load(bytes.NewReader(data), model); err != nil {
			if !equalSnapshots(before, snapshot(model)) {
				t.Fatalf("model changed although Load failed: %v", err)
			}
		}
		sd, meta, err := nn.ReadStateDict(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := nn.WriteStateDict(&buf, sd, meta); err != nil {
			t.Fatalf("cannot write back what was read: %v", err)
		}
		sd2, meta2, err := nn.ReadStateDict(&buf)
		if err != nil {
			t.Fatalf("cannot read back what was written: %v", err)
		}
		if len(sd2) != len(sd) || len(meta2) != len(meta) {
			t.Fatalf("round trip changed the contents")
		}
		for n, a := range sd {
			b := sd2[n]
			if b == nil || a.DType() != b.DType() || !slices.Equal(a.Shape(), b.Shape()) {
				t.Fatalf("round trip changed tensor %q", n)
			}
		}
	})
}
