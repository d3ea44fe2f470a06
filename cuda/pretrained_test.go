//go:build cuda

package cuda

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// TestLoadPretrainedOnGPU loads the hub-layout goldens of
// scripts/gen_golden_pretrained.py with the GPU as the default device: the
// weights are streamed into device tensors (tensor.SetFloat32s through the
// backend's Copy), and the logits (GPT-2's tanh GELU on the GPU) and the
// greedy continuation must match PyTorch's.
func TestLoadPretrainedOnGPU(t *testing.T) {
	gpu(t)
	dir := filepath.Join("..", "testdata", "pretrained")
	golden, _, err := nn.LoadStateDictFile(filepath.Join(dir, "golden.safetensors")) // on the CPU
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct{ dir, tag string }{{"sharded", "f32"}, {"bf16", "bf16"}} {
		onDevice(t, tensor.CUDA(0), 1, func() {
			m, err := nn.LoadPretrained(filepath.Join(dir, v.dir))
			if err != nil {
				t.Fatal(err)
			}
			if d := m.H[1].MLP.CFc.Weight.Device(); d != tensor.CUDA(0) {
				t.Fatalf("%s: weights on %s, want cuda:0", v.dir, d)
			}
			m.Eval()
			var logits *tensor.Tensor
			autograd.NoGrad(func() { logits = m.Forward(golden["idx"].To(tensor.CUDA(0))) })
			got, want := logits.To(tensor.CPU).Float32s(), golden["logits."+v.tag].Float32s()
			scale := 0.0
			for _, w := range want {
				scale = math.Max(scale, math.Abs(float64(w)))
			}
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Abs(float64(want[i]))+1e-5*scale {
					t.Fatalf("%s: logit %d = %g, want %g", v.dir, i, got[i], want[i])
				}
			}
			out := m.GenerateWith(golden["gen.prompt"].To(tensor.CUDA(0)), 40, 1, 1, tensor.NewGenerator(1))
			if g, w := out.To(tensor.CPU).Ints(), golden["gen."+v.tag].Ints(); !slices.Equal(g, w) {
				t.Errorf("%s: greedy continuation\n got %v\nwant %v", v.dir, g, w)
			}
		})
	}
}
