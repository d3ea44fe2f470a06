package nn

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/safetensors"
	"github.com/wickml/wick/tensor"
)

// writeAdapterFile writes the adapter's tensors into dir's
// adapter_model.safetensors through edit, which may change them (name,
// dtype, shape and raw bytes) before they are written.
func writeAdapterFile(t *testing.T, dir string, l *LoRA, edit func(ts []safetensors.Tensor) []safetensors.Tensor) {
	t.Helper()
	var ts []safetensors.Tensor
	for _, p := range l.NamedParameters() {
		var raw []byte
		for _, v := range p.Param.Float32s() {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
		ts = append(ts, safetensors.Tensor{Name: peftPrefix + p.Name, DType: "F32", Shape: p.Param.Shape(), Data: rawData(raw)})
	}
	ts = edit(ts)
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, ts, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, AdapterWeightsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func rawData(raw []byte) func(w io.Writer) error {
	return func(w io.Writer) error { _, err := w.Write(raw); return err }
}

// TestLoadAdapterBadFiles: each broken adapter file gives one line naming
// what is wrong, and the model is left as it was.
func TestLoadAdapterBadFiles(t *testing.T) {
	src := loraGPT(t, 0)
	l, err := ApplyLoRA(src, LoRAConfig{R: 2, Alpha: 4, TargetModules: []string{"c_attn"}})
	if err != nil {
		t.Fatal(err)
	}
	randomizeB(l, 7)
	good := t.TempDir()
	if err := l.SaveAdapter(good); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(good, AdapterConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	variant := func(edit func(ts []safetensors.Tensor) []safetensors.Tensor) string {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, AdapterConfigFile), cfg, 0o644)
		writeAdapterFile(t, d, l, edit)
		return d
	}
	raw := func(b []byte) string {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, AdapterConfigFile), cfg, 0o644)
		os.WriteFile(filepath.Join(d, AdapterWeightsFile), b, 0o644)
		return d
	}
	first := peftPrefix + "transformer.h.0.attn.c_attn.lora_A.weight"
	huge := binary.LittleEndian.AppendUint64(nil, MaxAdapterHeaderBytes+1)
	// a header that declares a 1 GiB tensor with a wrong shape, in a file
	// that holds none of its data: the shape is refused, nothing is read
	bigHdr := `{"` + first + `":{"dtype":"F32","shape":[2,134217728],"data_offsets":[0,1073741824]}}`
	big := append(binary.LittleEndian.AppendUint64(nil, uint64(len(bigHdr))), bigHdr...)
	for _, c := range []struct {
		name, want string
		dir        string
	}{
		{"non-finite weight", `holds NaN at element 3: the adapter is broken`, variant(func(ts []safetensors.Tensor) []safetensors.Tensor {
			var raw []byte
			for i := range 2 * 8 {
				v := float32(0.1)
				if i == 3 {
					v = float32(math.NaN())
				}
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
			}
			ts[0].Data = rawData(raw)
			return ts
		})},
		{"infinite bf16 weight", `holds +Inf at element 0`, variant(func(ts []safetensors.Tensor) []safetensors.Tensor {
			raw := make([]byte, 2*2*8)
			binary.LittleEndian.PutUint16(raw, 0x7f80) // bf16 +Inf
			ts[0].DType, ts[0].Data = "BF16", rawData(raw)
			return ts
		})},
		{"another base", `want [2 8] (r=2, layer 8→24): an adapter for another base model?`, variant(func(ts []safetensors.Tensor) []safetensors.Tensor {
			ts[0].Shape, ts[0].Data = []int{2, 16}, rawData(make([]byte, 2*16*4))
			return ts
		})},
		{"wrong rank in the file", `has shape [4 8]; want [2 8] (r=2`, variant(func(ts []safetensors.Tensor) []safetensors.Tensor {
			ts[0].Shape, ts[0].Data = []int{4, 8}, rawData(make([]byte, 4*8*4))
			return ts
		})},
		{"missing tensor", `has no tensor "` + peftPrefix + "transformer.h.0.attn.c_attn.lora_A.weight", variant(func(ts []safetensors.Tensor) []safetensors.Tensor { return ts[1:] })},
		{"not a LoRA weight", `tensor "base_model.model.transformer.h.0.attn.c_attn.weight" is not a LoRA weight`, variant(func(ts []safetensors.Tensor) []safetensors.Tensor {
			ts[0].Name = peftPrefix + "transformer.h.0.attn.c_attn.weight"
			return ts
		})},
		{"name matching nothing", `is for module "transformer.h.9.attn.c_attn", which is not a targeted`, variant(func(ts []safetensors.Tensor) []safetensors.Tensor {
			ts[0].Name = peftPrefix + "transformer.h.9.attn.c_attn.lora_A.weight"
			return ts
		})},
		{"integer dtype", `dtype I32 (want F32, BF16 or F16)`, variant(func(ts []safetensors.Tensor) []safetensors.Tensor {
			ts[0].DType = "I32"
			return ts
		})},
		{"oversized header", `header length 16777217 exceeds the 16777216 bytes`, raw(huge)},
		{"shape checked before data", `has shape [2 134217728]; want [2 8]`, raw(big)},
		{"truncated", `file is truncated`, raw(func() []byte {
			b, _ := os.ReadFile(filepath.Join(good, AdapterWeightsFile))
			return b[:len(b)-5]
		}())},
		{"empty file", `file is truncated`, raw(nil)},
	} {
		g := loraGPT(t, 0)
		_, err := LoadAdapter(c.dir, g)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line containing %q", c.name, err, c.want)
		}
		if g.H[0].Attn.CAttn.lora != nil || !g.Wte.Weight.IsRequiringGrad() {
			t.Errorf("%s: a failed load changed the model", c.name)
		}
	}
}

// A PEFT adapter saved from a bfloat16 model holds BF16 tensors: they load
// as float32 with the same values.
func TestLoadAdapterBF16(t *testing.T) {
	src := loraGPT(t, 0)
	l, err := ApplyLoRA(src, LoRAConfig{R: 2, Alpha: 4, TargetModules: []string{"c_attn"}})
	if err != nil {
		t.Fatal(err)
	}
	randomizeB(l, 7)
	d := t.TempDir()
	if err := l.SaveAdapter(d); err != nil {
		t.Fatal(err)
	}
	var want [][]float32
	writeAdapterFile(t, d, l, func(ts []safetensors.Tensor) []safetensors.Tensor {
		for i, p := range l.NamedParameters() {
			var raw []byte
			var vals []float32
			for _, v := range p.Param.Float32s() {
				h := uint16(math.Float32bits(v) >> 16) // truncated to bf16
				raw = binary.LittleEndian.AppendUint16(raw, h)
				vals = append(vals, math.Float32frombits(uint32(h)<<16))
			}
			ts[i].DType, ts[i].Data = "BF16", rawData(raw)
			want = append(want, vals)
		}
		return ts
	})
	l2, err := LoadAdapter(d, loraGPT(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range l2.Parameters() {
		if p.DType() != tensor.Float32 || !slices.Equal(p.Float32s(), want[i]) {
			t.Errorf("tensor %d: %v, want %v", i, p.Float32s(), want[i])
		}
	}
}

// LoRA.LoadStateDict restores the adapters of a resumed run, refusing
// tensors that do not fit.
func TestLoRALoadStateDict(t *testing.T) {
	g := loraGPT(t, 0)
	l, err := ApplyLoRA(g, LoRAConfig{R: 2, Alpha: 4, TargetModules: []string{"c_attn"}})
	if err != nil {
		t.Fatal(err)
	}
	randomizeB(l, 9)
	sd := StateDict{}
	for _, p := range l.NamedParameters() {
		sd[peftPrefix+p.Name] = p.Param.Detach().Clone()
	}
	g2 := loraGPT(t, 0)
	l2, err := ApplyLoRA(g2, LoRAConfig{R: 2, Alpha: 4, TargetModules: []string{"c_attn"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.LoadStateDict(sd); err != nil {
		t.Fatal(err)
	}
	g.Eval()
	g2.Eval()
	if !slices.Equal(g.Forward(loraTokens()).Float32s(), g2.Forward(loraTokens()).Float32s()) {
		t.Error("logits differ after LoadStateDict")
	}
	for _, p := range l2.Parameters() {
		if !p.IsRequiringGrad() || !p.IsLeaf() {
			t.Error("loaded adapter weights must be leaves that require a gradient")
		}
	}
	bad := StateDict{}
	for n, v := range sd {
		bad[n] = v
	}
	bad["extra.lora_A.weight"] = tensor.Zeros(2, 8)
	if err := l2.LoadStateDict(bad); err == nil || !strings.Contains(err.Error(), `unexpected tensor "extra.lora_A.weight"`) {
		t.Errorf("err = %v, want an unexpected tensor", err)
	}
	delete(bad, "extra.lora_A.weight")
	bad[peftPrefix+"transformer.h.0.attn.c_attn.lora_B.weight"] = tensor.Zeros(24, 3)
	if err := l2.LoadStateDict(bad); err == nil || !strings.Contains(err.Error(), "shape mismatch: [24 3], want [24 2]") {
		t.Errorf("err = %v, want a shape mismatch", err)
	}
}
