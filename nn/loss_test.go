package nn_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

// TestLossesMatchPyTorch replays gen_losses of scripts/gen_golden_nn.py:
// every loss with every reduction, forward and gradients (of sum(y·g)) for
// the input and, for float targets, the target.
func TestLossesMatchPyTorch(t *testing.T) { testLossesOn(t, tensor.CPU) }

// testLossesOn replays the loss goldens with the tensors on dev.
func testLossesOn(t *testing.T, dev tensor.Device) {
	sd := readGolden(t, "losses.safetensors")
	losses := map[string]func(x, y *tensor.Tensor, r nn.Reduction) *tensor.Tensor{
		"mse":        nn.MSELoss,
		"l1":         nn.L1Loss,
		"bce_logits": nn.BCEWithLogitsLoss,
		"nll":        nn.NLLLoss,
		"nll3d":      nn.NLLLoss,
	}
	for name, loss := range losses {
		for _, r := range []nn.Reduction{nn.ReduceMean, nn.ReduceSum, nn.ReduceNone} {
			key := name + "." + r.String()
			x := get(t, sd, name+".x").Clone().To(dev).RequiresGrad()
			target := get(t, sd, name+".target").Clone().To(dev)
			floatTarget := target.DType() == tensor.Float32
			if floatTarget {
				target.RequiresGrad()
			}
			y := loss(x, target, r)
			approx.EqualTensor(t, key+" y", y, get(t, sd, key+".y"), 1e-5, 1e-8)
			if y.Device() != dev || x.Device() != dev {
				t.Fatalf("%s: computed on %s, want %s", key, y.Device(), dev)
			}
			y.Mul(get(t, sd, key+".g").To(dev)).Sum().Backward()
			approx.EqualTensor(t, key+" grad_x", x.Grad(), get(t, sd, key+".grad_x"), 1e-5, 1e-8)
			if floatTarget {
				approx.EqualTensor(t, key+" grad_target", target.Grad(), get(t, sd, key+".grad_target"), 1e-5, 1e-8)
			}
		}
	}
}

func TestNLLLossIgnore(t *testing.T) {
	logp := tensor.New([]float32{-0.5, -1, -2, -3, -0.1, -4}, 3, 2).RequiresGrad()
	target := tensor.FromInts([]int{1, -1, 0})
	l := nn.NLLLossIgnore(logp, target, nn.ReduceMean, -1)
	if got, want := l.Item(), float32(0.55); !approx.Scalar(float64(got), float64(want), 0, 1e-6) {
		t.Errorf("mean over the kept rows = %v, want %v", got, want)
	}
	l.Backward()
	want := []float32{0, -0.5, 0, 0, -0.5, 0}
	for i, g := range logp.Grad().Float32s() {
		if g != want[i] {
			t.Errorf("grad = %v, want %v", logp.Grad().Float32s(), want)
			break
		}
	}
	none := nn.NLLLossIgnore(logp, target, nn.ReduceNone, -1).Float32s()
	if none[0] != 1 || none[1] != 0 || none[2] != 0.1 {
		t.Errorf("per-row losses %v, want [1 0 0.1]", none)
	}
	all := nn.NLLLossIgnore(logp, tensor.FromInts([]int{-1, -1, -1}), nn.ReduceMean, -1).Item()
	if !math.IsNaN(float64(all)) {
		t.Errorf("mean with every row ignored = %v, want NaN as PyTorch", all)
	}
	// a 1-D input with a 0-d target
	one := nn.NLLLoss(tensor.New([]float32{-1, -2, -3}), tensor.FromInts([]int{2}, 1).Reshape(), nn.ReduceNone)
	if one.Dim() != 0 || one.Item() != 3 {
		t.Errorf("NLLLoss([C], 0-d target) = %v, want the 0-d 3", one)
	}
}

func TestLossPanics(t *testing.T) {
	x := tensor.Zeros(2, 3)
	for name, c := range map[string]struct {
		f    func()
		want string
	}{
		"shapes":        {func() { nn.MSELoss(x, tensor.Zeros(3, 2), nn.ReduceMean) }, "MSELoss: input of shape [2 3] and target of shape [3 2] differ"},
		"int target":    {func() { nn.L1Loss(x, tensor.FromInts([]int{1, 2, 3, 4, 5, 6}, 2, 3), nn.ReduceSum) }, "L1Loss: input and target must be float32"},
		"reduction":     {func() { nn.BCEWithLogitsLoss(x, x, nn.Reduction(7)) }, "BCEWithLogitsLoss: unknown reduction 7"},
		"nll target":    {func() { nn.NLLLoss(x, tensor.FromInts([]int{0, 3}), nn.ReduceMean) }, "NLLLoss: target 3 is out of bounds for 3 classes"},
		"nll shape":     {func() { nn.NLLLoss(x, tensor.FromInts([]int{0, 1, 2}), nn.ReduceMean) }, "NLLLoss: input of shape [2 3] needs a target of shape [2], got [3]"},
		"nll float tgt": {func() { nn.NLLLoss(x, tensor.Zeros(2), nn.ReduceMean) }, "NLLLoss: target must be an int64 tensor"},
	} {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a *tensor.Error containing %q", name, err, c.want)
		}
	}
}

// TestBCEWithLogitsGradCheck checks the hand-written gradients of the
// custom function against finite differences, for logits and targets.
func TestBCEWithLogitsGradCheck(t *testing.T) {
	tensor.ManualSeed(2)
	x := tensor.Randn(3, 4).MulScalar(3)
	y := tensor.Rand(3, 4)
	for _, r := range []nn.Reduction{nn.ReduceMean, nn.ReduceNone} {
		if err := tensor.GradCheck(func(in []*tensor.Tensor) *tensor.Tensor {
			return nn.BCEWithLogitsLoss(in[0], in[1], r)
		}, []*tensor.Tensor{x, y}, tensor.GradCheckOptions{}); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
}
