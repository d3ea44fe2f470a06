package nn

import (
	"slices"
	"testing"

	"github.com/wickml/wick/tensor"
)

func loraLlama(t *testing.T) *Llama {
	t.Helper()
	cfg := LlamaConfig{ModelType: "qwen3", VocabSize: 17, HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 8, MaxPositionEmbeddings: 16, RMSNormEps: 1e-6, RopeTheta: 10000}
	return NewLlamaWith(cfg, tensor.NewGenerator(4))
}

// TestLoRALlama applies LoRA to a Llama-family model by PEFT's target
// names (q_proj, v_proj): the adapters sit on every layer's projections,
// only they get gradients, they save under PEFT's names for Hugging Face's
// layout (base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight)
// and load back with the same logits; Merge and Unmerge round-trip bit for
// bit.
func TestLoRALlama(t *testing.T) {
	m := loraLlama(t)
	idx := loraTokens()
	base := m.Forward(idx).Float32s()
	l, err := ApplyLoRA(m, LoRAConfig{R: 2, Alpha: 4, Dropout: 0.1, TargetModules: []string{"q_proj", "v_proj"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.v_proj", "model.layers.1.self_attn.q_proj", "model.layers.1.self_attn.v_proj"}
	if got := l.Modules(); !slices.Equal(got, want) {
		t.Fatalf("adapted modules %q, want %q", got, want)
	}
	m.Eval()
	if got := m.Forward(idx).Float32s(); !slices.Equal(got, base) {
		t.Errorf("fresh adapters (lora_B zero) changed the logits")
	}
	m.Train()
	m.Loss(idx.Slice(1, 0, 4), idx.Slice(1, 1, 5)).Backward()
	for _, p := range m.NamedParameters() {
		if p.Param.Grad() != nil {
			t.Errorf("frozen base parameter %s got a gradient", p.Name)
		}
	}
	for _, p := range l.NamedParameters() {
		if p.Param.Grad() == nil {
			t.Errorf("adapter parameter %s got no gradient", p.Name)
		}
	}
	randomizeB(l, 5)
	m.Eval()
	adapted := m.Forward(idx).Float32s()
	if slices.Equal(adapted, base) {
		t.Fatal("non-zero lora_B left the logits unchanged")
	}
	weights := func() [][]float32 {
		var w [][]float32
		for _, p := range m.NamedParameters() {
			w = append(w, p.Param.Float32s())
		}
		return w
	}
	before := weights()
	l.Merge()
	merged := m.Forward(idx).Float32s()
	for i := range merged {
		if d := merged[i] - adapted[i]; d > 1e-4 || d < -1e-4 {
			t.Fatalf("merged logit %d: %v, adapter's %v", i, merged[i], adapted[i])
		}
	}
	l.Unmerge()
	if !slices.EqualFunc(weights(), before, slices.Equal[[]float32]) {
		t.Error("Unmerge did not restore the base weights bit for bit")
	}
	dir := t.TempDir()
	if err := l.SaveAdapter(dir); err != nil {
		t.Fatal(err)
	}
	sd, _, err := LoadStateDictFile(dir + "/" + AdapterWeightsFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sd["base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight"]; !ok || len(sd) != 8 {
		t.Errorf("adapter tensors %q", sd.Names())
	}
	m2 := loraLlama(t)
	if _, err := LoadAdapter(dir, m2); err != nil {
		t.Fatal(err)
	}
	m2.Eval()
	if got := m2.Forward(idx).Float32s(); !slices.Equal(got, adapted) {
		t.Error("logits after LoadAdapter differ from the saved adapter's")
	}
}
