package nn_test

import (
	"math"
	"slices"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// dtypeModels builds, for each family, the same small model each call:
// GPT with biases, GPT-2's activation, and the Llama family with
// grouped-query attention, Qwen3's q/k norms and biases, and a head tied
// to the embeddings.
func dtypeModels() map[string]func() nn.BatchLM {
	return map[string]func() nn.BatchLM{
		"gpt": func() nn.BatchLM {
			return nn.NewGPTWith(nn.GPTConfig{VocabSize: 37, BlockSize: 24, NLayer: 2, NHead: 3, NEmbd: 21, Bias: true}, tensor.NewGenerator(1))
		},
		"gpt2-act": func() nn.BatchLM {
			return nn.NewGPTWith(nn.GPTConfig{VocabSize: 37, BlockSize: 24, NLayer: 1, NHead: 2, NEmbd: 16, Activation: nn.ActGELUTanh}, tensor.NewGenerator(2))
		},
		"qwen3-tied": func() nn.BatchLM {
			return nn.NewLlamaWith(nn.LlamaConfig{
				ModelType: "qwen3", VocabSize: 29, HiddenSize: 16, IntermediateSize: 20, NumHiddenLayers: 2,
				NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 6, MaxPositionEmbeddings: 24,
				RMSNormEps: 1e-6, RopeTheta: 10000, QKVBias: true, QKNorm: true, TieWordEmbeddings: true,
			}, tensor.NewGenerator(3))
		},
	}
}

// closeLogits fails unless got is within tol·(1 + |want|) of want
// elementwise.
func closeLogits(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d logits, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); !(d <= tol*(1+math.Abs(float64(want[i])))) {
			t.Fatalf("%s: logit %d = %v, float32 model %v", what, i, got[i], want[i])
		}
	}
}

// TestToDTypeInference checks models whose parameters are bfloat16 or
// float16 (ToDType) against the float32 model holding the same rounded
// values: Forward, ForwardCached step by step, ForwardBatch and greedy
// Generate. Both sides compute in float32 from the same weight values, so
// they differ only by the order of float32 sums (the 16-bit product's
// kernel against the float32 one): a few units of float32 roundoff (2⁻²⁴)
// times the sum lengths (≤ 84) per layer, far below the 1e-4 allowed;
// greedy tokens are equal.
func TestToDTypeInference(t *testing.T) {
	for name, build := range dtypeModels() {
		for _, dt := range []tensor.DType{tensor.BFloat16, tensor.Float16} {
			m16, ref := build(), build()
			nn.ToDType(m16, dt)
			nn.ToDType(ref, dt)
			nn.ToDType(ref, tensor.Float32)
			m16.Eval()
			ref.Eval()
			for _, p := range m16.NamedParameters() {
				if p.Param.DType() != dt {
					t.Fatalf("%s %s: parameter %s is %s", name, dt, p.Name, p.Param.DType())
				}
			}
			if got, want := nn.ParameterBytes(m16), int64(nn.ParameterCount(m16))*2; got != want || nn.ParameterBytes(ref) != 2*got {
				t.Fatalf("%s %s: %d parameter bytes, want %d (half of float32's %d)", name, dt, got, want, nn.ParameterBytes(ref))
			}
			what := name + " " + dt.String()
			gen := tensor.NewGenerator(5)
			ids := make([]int, 9)
			for i := range ids {
				ids[i] = gen.IntN(m16.VocabSize())
			}
			idx := tensor.FromInts(ids, 1, len(ids))
			y := m16.Forward(idx)
			if y.DType() != tensor.Float32 {
				t.Fatalf("%s: Forward gave %s logits", what, y.DType())
			}
			closeLogits(t, what+" Forward", y.Float32s(), ref.Forward(idx).Float32s(), 1e-4)

			c16, cref := m16.NewKVCache(1, 24), ref.NewKVCache(1, 24)
			closeLogits(t, what+" prefill", m16.ForwardCached(idx.Slice(1, 0, 5), c16).Float32s(), ref.ForwardCached(idx.Slice(1, 0, 5), cref).Float32s(), 1e-4)
			for p := 5; p < len(ids); p++ {
				closeLogits(t, what+" decode", m16.ForwardCached(idx.Slice(1, p, p+1), c16).Float32s(), ref.ForwardCached(idx.Slice(1, p, p+1), cref).Float32s(), 1e-4)
			}

			chunks := [][]int{ids[:4], ids[4:5], ids}
			d16, dref := newDenseCaches(m16, 3, 24), newDenseCaches(ref, 3, 24)
			got, want := d16.step(m16, []int{0, 1, 2}, chunks, []int{0, 0, 0}), dref.step(ref, []int{0, 1, 2}, chunks, []int{0, 0, 0})
			for i := range got {
				closeLogits(t, what+" ForwardBatch", got[i], want[i], 1e-4)
			}

			opts := nn.GenerateOptions{MaxNewTokens: 10}
			out16, err := nn.Generate(m16, idx.Slice(1, 0, 3), opts)
			if err != nil {
				t.Fatal(err)
			}
			outRef, err := nn.Generate(ref, idx.Slice(1, 0, 3), opts)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := out16.Ints(), outRef.Ints(); !slices.Equal(a, b) {
				t.Fatalf("%s: greedy tokens %v, float32 model %v", what, a, b)
			}
		}
	}
}

// TestToDTypeKeepsTies checks that GPT's lm_head stays tied to wte
// through ToDType, and that converting back to float32 gives the rounded
// values exactly.
func TestToDTypeKeepsTies(t *testing.T) {
	g := nn.NewGPTWith(nn.GPTConfig{VocabSize: 13, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8}, tensor.NewGenerator(4))
	want := g.Wte.Weight.BFloat16().ToDType(tensor.Float32).Float32s()
	nn.ToDType(g, tensor.BFloat16)
	if g.LmHead.Weight != g.Wte.Weight || g.Wte.Weight.DType() != tensor.BFloat16 {
		t.Fatalf("lm_head %s and wte %s are not one bfloat16 tensor", g.LmHead.Weight.DType(), g.Wte.Weight.DType())
	}
	nn.ToDType(g, tensor.Float32)
	if g.LmHead.Weight != g.Wte.Weight || !slices.Equal(g.Wte.Weight.Float32s(), want) {
		t.Fatal("float32 again: lm_head untied or wte not the rounded values")
	}
}

// TestToDTypeRefuses checks that ToDType panics with a *tensor.Error for
// a dtype that is not a float one.
func TestToDTypeRefuses(t *testing.T) {
	g := nn.NewGPTWith(nn.GPTConfig{VocabSize: 13, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8}, tensor.NewGenerator(4))
	err := tensor.Catch(func() { nn.ToDType(g, tensor.Int64) })
	if _, ok := err.(*tensor.Error); !ok {
		t.Fatalf("ToDType(Int64): %v, want a *tensor.Error", err)
	}
}
