package tensor_test

import (
	"math"
	"slices"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// f is a small network with two dropouts drawn from gen.
func ckptNet(w *tensor.Tensor, gen *tensor.Generator) func(in []*tensor.Tensor) *tensor.Tensor {
	return func(in []*tensor.Tensor) *tensor.Tensor {
		h := in[0].MatMul(w).Tanh().DropoutWith(0.5, true, gen)
		return h.MatMul(w.T()).Sigmoid().DropoutWith(0.3, true, gen).Mul(in[0])
	}
}

func ckptGrads(t *testing.T, ckpt bool) ([]float32, []float32, []float32, []byte) {
	gen := tensor.NewGenerator(5)
	w := tensor.NewGenerator(1).Randn(6, 6).RequiresGrad()
	x := tensor.NewGenerator(2).Randn(4, 6).RequiresGrad()
	f := ckptNet(w, gen)
	var y *tensor.Tensor
	if ckpt {
		y = tensor.Checkpoint(f, x)
	} else {
		y = f([]*tensor.Tensor{x})
	}
	y.Sum().Backward()
	return y.Float32s(), x.Grad().Float32s(), w.Grad().Float32s(), gen.State()
}

func ckptBitsEqual(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

func TestCheckpointMatchesDirect(t *testing.T) {
	y0, gx0, gw0, s0 := ckptGrads(t, false)
	y1, gx1, gw1, s1 := ckptGrads(t, true)
	if !ckptBitsEqual(y0, y1) || !ckptBitsEqual(gx0, gx1) || !ckptBitsEqual(gw0, gw1) {
		t.Errorf("checkpointed output or gradients differ from the direct ones")
	}
	// the recomputation replays privately: the generator ends where the
	// direct run leaves it
	if !slices.Equal(s0, s1) {
		t.Errorf("the generator's state after the step differs")
	}
}

func TestCheckpointWithoutRecording(t *testing.T) {
	w := tensor.NewGenerator(1).Randn(6, 6).RequiresGrad()
	x := tensor.NewGenerator(2).Randn(4, 6)
	autograd.NoGrad(func() {
		if y := tensor.Checkpoint(ckptNet(w, tensor.NewGenerator(5)), x); y.IsRequiringGrad() {
			t.Error("inside NoGrad the result must not require grad")
		}
	})
	// an input that does not require grad and no parameter passed: f runs
	// plainly, and w still gets its gradient through f's own recording
	y := tensor.Checkpoint(ckptNet(w, tensor.NewGenerator(5)), x)
	y.Sum().Backward()
	if w.Grad() == nil {
		t.Error("w has no gradient")
	}
}

func TestConcurrentCheckpoint(t *testing.T) {
	_, gx0, gw0, _ := ckptGrads(t, false)
	done := make(chan bool)
	for range 4 {
		go func() {
			_, gx, gw, _ := ckptGrads(t, true)
			done <- ckptBitsEqual(gx, gx0) && ckptBitsEqual(gw, gw0)
		}()
	}
	for range 4 {
		if !<-done {
			t.Error("a goroutine's checkpointed gradients differ")
		}
	}
}
