package nn

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wickml/wick/safetensors"
	"github.com/wickml/wick/tensor"
)

// TestGPTSavePretrained writes a GPT in GPT-2's hub layout and reads it
// back with LoadPretrained: the same config and weights, bit for bit, the
// Conv1D weights stored [in, out] and no lm_head; a GPT without biases is
// refused.
func TestGPTSavePretrained(t *testing.T) {
	for _, act := range []Activation{ActGELU, ActGELUTanh} {
		tensor.ManualSeed(3)
		g := NewGPT(GPTConfig{VocabSize: 23, BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 8, Bias: true, Activation: act})
		dir := filepath.Join(t.TempDir(), "gpt2")
		if err := g.SavePretrained(dir); err != nil {
			t.Fatal(err)
		}
		h, err := safetensors.ReadFileHeader(filepath.Join(dir, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		shapes := map[string][]int{}
		for _, e := range h.Entries {
			shapes[e.Name] = e.Shape
		}
		if s := shapes["transformer.h.1.mlp.c_fc.weight"]; !slices.Equal(s, []int{8, 32}) {
			t.Errorf("c_fc stored as %v, want Conv1D's [8 32]", s)
		}
		if _, ok := shapes["lm_head.weight"]; ok || len(shapes) != len(g.NamedParameters()) {
			t.Errorf("%d tensors (lm_head present: %v), want the %d parameters without lm_head", len(shapes), ok, len(g.NamedParameters()))
		}
		r, err := LoadPretrained(dir)
		if err != nil {
			t.Fatal(err)
		}
		if r.Config != g.Config {
			t.Fatalf("read back %+v, saved %+v", r.Config, g.Config)
		}
		want := g.NamedParameters()
		for i, p := range r.NamedParameters() {
			if p.Name != want[i].Name || !slices.Equal(p.Param.Float32s(), want[i].Param.Float32s()) {
				t.Errorf("%s differs after the round trip", p.Name)
			}
		}
	}
	g := NewGPT(GPTConfig{VocabSize: 5, BlockSize: 4, NLayer: 1, NHead: 1, NEmbd: 4})
	if err := g.SavePretrained(t.TempDir()); !errors.Is(err, ErrBadConfig) {
		t.Errorf("a GPT without biases: %v, want ErrBadConfig", err)
	}
}
