package nn_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// sameBits16 fails unless a and b have the same 16-bit parameters, dtype and
// bits, by name.
func sameBits16(t *testing.T, a, b nn.Module) {
	t.Helper()
	pa, pb := a.NamedParameters(), b.NamedParameters()
	if len(pa) != len(pb) {
		t.Fatalf("%d parameters, want %d", len(pa), len(pb))
	}
	for i := range pa {
		x, y := pa[i].Param, pb[i].Param
		if pa[i].Name != pb[i].Name || x.DType() != y.DType() || !slices.Equal(x.Bits16(), y.Bits16()) {
			t.Fatalf("parameter %s (%s) differs from %s (%s)", pa[i].Name, x.DType(), pb[i].Name, y.DType())
		}
	}
}

// TestLoadCausalLMDTypeGoldens loads the Llama goldens' BF16 and F16
// directories in their own dtype: the parameters keep the file's bits
// (those of the float32 load rounded back, which is exact), take half the
// bytes, and give PyTorch's logits and greedy tokens. The goldens are
// PyTorch's float32 forward over the file's rounded weights, and the
// 16-bit model computes in float32 over the same values, so the float32
// tests' 1e-4 bound (relative to 1+|x|) holds here too.
func TestLoadCausalLMDTypeGoldens(t *testing.T) {
	for _, c := range []struct {
		name string
		dt   tensor.DType
	}{{"llama3_mqa_bf16", tensor.BFloat16}, {"llama_linear_f16_sharded", tensor.Float16}} {
		t.Run(c.name, func(t *testing.T) {
			m, err := nn.LoadCausalLMWith(llamaDir(c.name), nn.LoadOptions{DType: c.dt})
			if err != nil {
				t.Fatal(err)
			}
			ref, err := nn.LoadCausalLM(llamaDir(c.name))
			if err != nil {
				t.Fatal(err)
			}
			f32 := nn.ParameterBytes(ref)
			nn.ToDType(ref, c.dt)
			sameBits16(t, m, ref)
			if got := nn.ParameterBytes(m); got != int64(nn.ParameterCount(m))*2 || 2*got != f32 {
				t.Errorf("%d parameter bytes, want %d (half of float32's %d)", got, nn.ParameterCount(m)*2, f32)
			}
			sd, _, err := nn.LoadStateDictFile(filepath.Join(llamaDir(c.name), "golden.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			m.Eval()
			var logits *tensor.Tensor
			autograd.NoGrad(func() { logits = m.Forward(get(t, sd, "idx")) })
			if logits.DType() != tensor.Float32 {
				t.Fatalf("logits are %s", logits.DType())
			}
			if d := maxDiff(t, "logits", logits, get(t, sd, "logits")); d > 1e-4 {
				t.Errorf("logits differ from PyTorch's by %.3g (relative to 1+|x|), want ≤ 1e-4", d)
			}
			out, err := nn.Generate(m, get(t, sd, "prompt"), nn.GenerateOptions{MaxNewTokens: 12, IgnoreEOS: true})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := out.Ints(), get(t, sd, "greedy").Ints(); !slices.Equal(got, want) {
				t.Errorf("greedy tokens %v, PyTorch's %v", got, want)
			}
		})
	}
}

// TestLoadPretrainedDType loads the GPT-2 goldens' directories as
// bfloat16 and float16: a file of that dtype keeps its bits and gives the
// golden logits and greedy tokens; an F32 file is rounded tensor by tensor
// to what ToDType makes of the float32 load.
func TestLoadPretrainedDType(t *testing.T) {
	golden := pretrainedGolden(t)
	for _, c := range []struct {
		dir string
		dt  tensor.DType
		tag string // golden logits of the file's own values, "" for none
	}{{"bf16", tensor.BFloat16, "bf16"}, {"f16", tensor.Float16, "f16"}, {"plain", tensor.BFloat16, ""}, {"sharded", tensor.Float16, ""}} {
		t.Run(c.dir+"-"+c.dt.String(), func(t *testing.T) {
			dir := filepath.Join(pretrainedDir, c.dir)
			m, err := nn.LoadPretrainedWith(dir, nn.LoadOptions{DType: c.dt})
			if err != nil {
				t.Fatal(err)
			}
			if m.LmHead.Weight != m.Wte.Weight {
				t.Fatal("lm_head is not tied to wte")
			}
			ref, err := nn.LoadPretrained(dir)
			if err != nil {
				t.Fatal(err)
			}
			nn.ToDType(ref, c.dt)
			sameBits16(t, m, ref)
			if c.tag == "" {
				return
			}
			m.Eval()
			var logits *tensor.Tensor
			autograd.NoGrad(func() { logits = m.Forward(get(t, golden, "idx")) })
			approx.EqualTensor(t, "logits", logits, get(t, golden, "logits."+c.tag), approx.ReduceRTol, approx.ReduceATol)
			out := m.GenerateWith(get(t, golden, "gen.prompt"), 40, 1, 1, tensor.NewGenerator(1))
			if got, want := out.Ints(), get(t, golden, "gen."+c.tag).Ints(); !slices.Equal(got, want) {
				t.Errorf("greedy continuation\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestLoadDTypeRefused checks that a dtype the models cannot hold is an
// error, not a model.
func TestLoadDTypeRefused(t *testing.T) {
	if m, err := nn.LoadCausalLMWith(llamaDir("llama_gqa"), nn.LoadOptions{DType: tensor.Int64}); err == nil {
		t.Fatalf("Int64 load gave %T, want an error", m)
	}
	if m, err := nn.LoadPretrainedWith(filepath.Join(pretrainedDir, "plain"), nn.LoadOptions{DType: tensor.Int64}); err == nil {
		t.Fatalf("Int64 load gave %T, want an error", m)
	}
}

// TestLoadFloat16Overflow checks that an F32 weight beyond float16's range
// (65504) loaded as float16 is an error wrapping ErrNonFinite naming the
// tensor, not an infinity in the model; as bfloat16 it loads.
func TestLoadFloat16Overflow(t *testing.T) {
	dir := t.TempDir()
	m := nn.NewLlamaWith(nn.LlamaConfig{ModelType: "llama", VocabSize: 11, HiddenSize: 8, IntermediateSize: 16, NumHiddenLayers: 1,
		NumAttentionHeads: 2, NumKeyValueHeads: 1, HeadDim: 4, MaxPositionEmbeddings: 16, RMSNormEps: 1e-6, RopeTheta: 1e4}, tensor.NewGenerator(2))
	autograd.NoGrad(func() { m.Layers[0].MLP.UpProj.Weight.SetFloat32s(5, []float32{1e5}) })
	if err := m.SavePretrained(dir); err != nil {
		t.Fatal(err)
	}
	_, err := nn.LoadCausalLMWith(dir, nn.LoadOptions{DType: tensor.Float16})
	if !errors.Is(err, nn.ErrNonFinite) || !strings.Contains(err.Error(), "model.layers.0.mlp.up_proj.weight") {
		t.Fatalf("float16 load of 1e5: %v, want ErrNonFinite naming the tensor", err)
	}
	if _, err := nn.LoadCausalLMWith(dir, nn.LoadOptions{DType: tensor.BFloat16}); err != nil {
		t.Fatal(err)
	}
}
