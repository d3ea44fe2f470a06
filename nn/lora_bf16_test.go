package nn

import (
	"math"
	"slices"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestLoRABF16Base trains float32 adapters on a bfloat16 base: the base
// weights stay bfloat16 and frozen, and the loss and the adapters'
// gradients (which flow through the frozen bfloat16 weights to the layers
// below) equal those of the same adapters on the float32 model holding the
// bfloat16 values, within float32 summation order. Merge keeps the weights
// bfloat16 (the float32 sum rounded once) and Unmerge restores them bit
// for bit.
func TestLoRABF16Base(t *testing.T) {
	m16, m32 := loraLlama(t), loraLlama(t)
	ToDType(m16, tensor.BFloat16)
	ToDType(m32, tensor.BFloat16)
	ToDType(m32, tensor.Float32) // the bfloat16 values, widened exactly
	// q_proj in layer 0 gets its gradient through layer 1's frozen
	// bfloat16 weights and layer 0's o_proj and MLP
	cfg := func() LoRAConfig {
		return LoRAConfig{R: 2, Alpha: 4, Dropout: 0.1, TargetModules: []string{"q_proj", "v_proj"}, Gen: tensor.NewGenerator(3)}
	}
	l16, err := ApplyLoRA(m16, cfg())
	if err != nil {
		t.Fatal(err)
	}
	l32, err := ApplyLoRA(m32, cfg())
	if err != nil {
		t.Fatal(err)
	}
	randomizeB(l16, 5)
	randomizeB(l32, 5)
	for _, p := range l16.Parameters() {
		if p.DType() != tensor.Float32 {
			t.Fatalf("adapter parameter of dtype %s, want float32", p.DType())
		}
	}
	idx := loraTokens()
	m16.Train()
	m32.Train()
	loss16 := m16.Loss(idx.Slice(1, 0, 4), idx.Slice(1, 1, 5))
	loss32 := m32.Loss(idx.Slice(1, 0, 4), idx.Slice(1, 1, 5))
	if loss16.DType() != tensor.Float32 || math.Abs(float64(loss16.Item()-loss32.Item())) > 1e-5 {
		t.Fatalf("loss on the bfloat16 base %s %v, on its float32 copy %v", loss16.DType(), loss16.Item(), loss32.Item())
	}
	loss16.Backward()
	loss32.Backward()
	for _, p := range m16.NamedParameters() {
		if p.Param.Grad() != nil {
			t.Errorf("frozen base parameter %s got a gradient", p.Name)
		}
		if p.Param.DType() != tensor.BFloat16 {
			t.Errorf("base parameter %s is %s, want bfloat16", p.Name, p.Param.DType())
		}
	}
	want := l32.NamedParameters()
	for i, p := range l16.NamedParameters() {
		g, w := p.Param.Grad(), want[i].Param.Grad()
		if g == nil || g.DType() != tensor.Float32 {
			t.Fatalf("%s: no float32 gradient", p.Name)
		}
		wv := w.Float32s()
		var norm float64
		for _, v := range wv {
			norm = max(norm, math.Abs(float64(v)))
		}
		if norm == 0 {
			t.Fatalf("%s: zero gradient on the float32 model", p.Name)
		}
		for j, v := range g.Float32s() {
			if math.Abs(float64(v-wv[j])) > 1e-4*norm {
				t.Fatalf("%s[%d]: gradient %v on the bfloat16 base, %v on its float32 copy", p.Name, j, v, wv[j])
			}
		}
	}

	m16.Eval()
	adapted := m16.Forward(idx).Float32s()
	q := m16.Layers[0].SelfAttn.QProj
	w0 := q.Weight
	bits0 := slices.Clone(w0.Float32s())
	l16.Merge()
	if q.Weight.DType() != tensor.BFloat16 {
		t.Fatalf("merged weight is %s, want bfloat16", q.Weight.DType())
	}
	// the merged weight is W + s·B·A rounded once to bfloat16
	d := l16.layers["model.layers.0.self_attn.q_proj"].lora.deltaWeight().Float32s()
	for i, v := range q.Weight.Float32s() {
		sum := bits0[i] + d[i]
		if want := tensor.New([]float32{sum}, 1).ToDType(tensor.BFloat16).Float32s()[0]; v != want {
			t.Fatalf("merged weight %d = %v, want bfloat16(%v) = %v", i, v, sum, want)
		}
	}
	merged := m16.Forward(idx).Float32s()
	for i, v := range merged {
		// the merged bfloat16 weights round the update: within bfloat16's
		// relative precision of the logits' scale
		if math.Abs(float64(v-adapted[i])) > 0.05 {
			t.Fatalf("merged logit %d = %v, adapted %v", i, v, adapted[i])
		}
	}
	l16.Unmerge()
	if q.Weight != w0 || !slices.Equal(w0.Float32s(), bits0) {
		t.Fatal("Unmerge did not restore the bfloat16 weight")
	}
	if got := m16.Forward(idx).Float32s(); !slices.Equal(got, adapted) {
		t.Fatal("logits after Unmerge differ from the adapted model's")
	}
}
