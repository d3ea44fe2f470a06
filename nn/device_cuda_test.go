//go:build cuda

package nn_test

import (
	"testing"

	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// TestToCUDA moves a GPT to the GPU in one call: every parameter lands
// there, still requiring grad, lm_head stays tied, the logits equal the
// CPU model's, and a training step runs there.
func TestToCUDA(t *testing.T) {
	if !cuda.Available() {
		t.Skip("cuda: no usable GPU; TestToSameDevice and the internal TestMoveModule run on the CPU")
	}
	tensor.ManualSeed(1)
	g := tinyGPT()
	g.Eval()
	x := tensor.FromInts([]int{1, 2, 3, 4}, 1, 4)
	want := g.Forward(x)
	if err := nn.To(g, tensor.CUDA(0)); err != nil {
		t.Fatal(err)
	}
	for _, p := range g.NamedParameters() {
		if p.Param.Device() != tensor.CUDA(0) || !p.Param.IsRequiringGrad() {
			t.Fatalf("%s: on %s, requires grad %v", p.Name, p.Param.Device(), p.Param.IsRequiringGrad())
		}
	}
	if g.LmHead.Weight != g.Wte.Weight {
		t.Error("lm_head.weight is no longer tied to wte.weight")
	}
	xd := x.To(tensor.CUDA(0))
	approx.EqualTensor(t, "logits on the GPU", g.Forward(xd).To(tensor.CPU), want, 1e-4, 1e-6)
	opt := optim.NewAdamW(g.Parameters(), optim.AdamWConfig{LR: 1e-2})
	g.Train()
	g.Loss(xd, xd).Backward()
	opt.Step()
	if g.Wte.Weight.Device() != tensor.CUDA(0) {
		t.Error("the step moved the weights")
	}
}
