//go:build cuda

package cuda

import (
	"math"
	"slices"
	"testing"

	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// autocastRun is what trainGPTAutocast saw: each step's loss, the steps
// the scaler skipped, and the scaler's final scale and growth tracker.
type autocastRun struct {
	losses  []float32
	skipped int
	scale   float32
	tracker int
}

// trainGPTAutocast is trainGPT with the forward pass and the loss inside
// tensor.Autocast(dt), the weights, gradients and AdamW state float32,
// and float16's dynamic loss scaling through a GradScaler of cfg when
// dt is Float16, as cmd/train takes its steps: the loss scaled before
// Backward, the gradients unscaled before clipping, steps with inf/NaN
// gradients skipped.
func trainGPTAutocast(t testing.TB, dev tensor.Device, steps int, dt tensor.DType, cfg optim.GradScalerConfig) (r autocastRun) {
	onDevice(t, dev, 1337, func() {
		gc := nn.GPTConfig{VocabSize: 65, BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 32, Dropout: 0, Bias: true}
		model := nn.NewGPT(gc)
		params := model.Parameters()
		opt := optim.NewAdamWGroups(optim.DecayGroups(params, 0.1), optim.AdamWConfig{LR: 1e-3, Beta2: 0.99})
		x := tensor.RandInt(0, gc.VocabSize, 4, gc.BlockSize)
		y := tensor.RandInt(0, gc.VocabSize, 4, gc.BlockSize)
		var s *optim.GradScaler
		if dt == tensor.Float16 {
			s = optim.NewGradScaler(cfg)
		}
		for range steps {
			var loss *tensor.Tensor
			tensor.Autocast(dt, func() { loss = model.Loss(x, y) })
			opt.ZeroGrad()
			if s == nil {
				loss.Backward()
				optim.ClipGradNorm(params, 1)
				opt.Step()
			} else {
				s.ScaleLoss(loss).Backward()
				if !s.Unscale(params) {
					optim.ClipGradNorm(params, 1)
				}
				if !s.Step(opt, params) {
					r.skipped++
				}
				s.Update()
			}
			r.losses = append(r.losses, loss.Item())
		}
		for _, p := range params {
			if p.Device() != dev || p.DType() != tensor.Float32 || p.Grad() == nil || p.Grad().DType() != tensor.Float32 {
				t.Fatalf("%s: a parameter is %s %s with gradient %v; want float32 master weights and gradients on %s", dt, p.DType(), p.Device(), p.Grad(), dev)
			}
		}
		if s != nil {
			r.scale, r.tracker = s.Scale(), s.GrowthTracker()
		}
	})
	return r
}

// TestAutocastTrainingMatchesCPU trains the small GPT of
// TestGPTTrainingMatchesCPU for five steps inside autocast on the GPU
// (its products cublasGemmEx calls on 16-bit operands with float32
// compute) and on the CPU: in bfloat16, and in float16 with loss scaling
// (no step overflows at PyTorch's initial scale, 2¹⁶, on either device).
// The losses agree to 1e-3 relative (the same rounded operands on both
// devices, float32 sums in another order, and what that order changes
// in the roundings after), fall, and
// differ from the float32 run's by no more than that rounding (5e-2)
// without equalling them (the operands were rounded).
func TestAutocastTrainingMatchesCPU(t *testing.T) {
	gpu(t)
	dev := tensor.CUDA(0)
	f32 := trainGPT(t, dev, 5)
	for _, dt := range []tensor.DType{tensor.BFloat16, tensor.Float16} {
		g := trainGPTAutocast(t, dev, 5, dt, optim.GradScalerConfig{})
		c := trainGPTAutocast(t, tensor.CPU, 5, dt, optim.GradScalerConfig{})
		t.Logf("%s: GPU losses %v\nCPU losses %v\nfloat32 GPU %v", dt, g.losses, c.losses, f32)
		approx.Equal(t, dt.String()+" loss, cuda against cpu", g.losses, c.losses, 1e-3, 0)
		approx.Equal(t, dt.String()+" loss against float32's", g.losses, f32, 5e-2, 0)
		if slices.Equal(g.losses, f32) {
			t.Errorf("%s: the autocast losses on %s equal the float32 ones: the products did not round", dt, dev)
		}
		if !(g.losses[4] < g.losses[0]) {
			t.Errorf("%s: the loss did not fall in five steps on one batch: %v", dt, g.losses)
		}
		if dt == tensor.Float16 && (g.skipped != 0 || c.skipped != 0 || g.scale != 65536 || g.tracker != 5) {
			t.Errorf("float16: %d steps skipped on %s, %d on the cpu, scale %v and growth tracker %d after; want none skipped, 65536 and 5", g.skipped, dev, c.skipped, g.scale, g.tracker)
		}
	}
}

// TestGradScalerOverflowCUDA trains in float16 autocast on the GPU with a
// loss scale far too large (2⁴⁰): the scaled logits' gradient overflows
// float16 where the backward products round it, so the first step finds
// infinities, leaves every weight as it was (bit for bit), and halves
// the scale (its growth tracker back to 0); the steps after halve it
// again until the gradients fit, and from there it trains: the weights
// move, the losses stay finite and fall, and the scale stays put.
func TestGradScalerOverflowCUDA(t *testing.T) {
	gpu(t)
	dev := tensor.CUDA(0)
	onDevice(t, dev, 1337, func() {
		gc := nn.GPTConfig{VocabSize: 65, BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 32, Dropout: 0, Bias: true}
		model := nn.NewGPT(gc)
		params := model.Parameters()
		opt := optim.NewAdamW(params, optim.AdamWConfig{LR: 1e-3})
		x := tensor.RandInt(0, gc.VocabSize, 4, gc.BlockSize)
		y := tensor.RandInt(0, gc.VocabSize, 4, gc.BlockSize)
		s := optim.NewGradScaler(optim.GradScalerConfig{InitScale: 1 << 40})
		weights := func() (w [][]float32) {
			for _, p := range params {
				w = append(w, p.Float32s())
			}
			return w
		}
		step := func() (loss float32, stepped, foundInf bool) {
			var l *tensor.Tensor
			tensor.Autocast(tensor.Float16, func() { l = model.Loss(x, y) })
			opt.ZeroGrad()
			s.ScaleLoss(l).Backward()
			foundInf = s.Unscale(params)
			stepped = s.Step(opt, params)
			s.Update()
			return l.Item(), stepped, foundInf
		}
		before := weights()
		loss, stepped, foundInf := step()
		if !foundInf || stepped {
			t.Fatalf("at scale 2⁴⁰: found inf %v, stepped %v; want the overflow found and the step skipped", foundInf, stepped)
		}
		if s.Scale() != 1<<39 || s.GrowthTracker() != 0 {
			t.Fatalf("after the skipped step: scale %v, growth tracker %d; want 2³⁹ and 0", s.Scale(), s.GrowthTracker())
		}
		for i, w := range weights() {
			if !slices.Equal(w, before[i]) {
				t.Fatalf("the skipped step changed parameter %d", i)
			}
		}
		if math.IsInf(float64(loss), 0) || loss != loss {
			t.Fatalf("the loss is %v: the overflow must be in the scaled gradients only", loss)
		}
		skipped := 1
		for !stepped {
			if skipped > 40 {
				t.Fatalf("still overflowing after %d halvings (scale %v)", skipped, s.Scale())
			}
			prev := s.Scale()
			if _, stepped, _ = step(); !stepped {
				skipped++
				if s.Scale() != prev/2 {
					t.Fatalf("a skipped step took the scale from %v to %v, want half", prev, s.Scale())
				}
			}
		}
		fit := s.Scale()
		t.Logf("%d steps skipped, then trained at scale %v (2^%.0f)", skipped, fit, math.Log2(float64(fit)))
		if slices.EqualFunc(weights(), before, slices.Equal) {
			t.Fatal("the first step taken left the weights as they were")
		}
		var losses []float32
		for range 5 {
			l, ok, _ := step()
			if !ok {
				t.Fatalf("a step overflowed again at scale %v", s.Scale())
			}
			losses = append(losses, l)
		}
		if s.Scale() != fit || s.GrowthTracker() != 6 {
			t.Errorf("after six steps taken: scale %v, growth tracker %d; want %v and 6", s.Scale(), s.GrowthTracker(), fit)
		}
		if !(losses[4] < losses[0]) {
			t.Errorf("the loss did not fall once the gradients fit: %v", losses)
		}
	})
}

// TestGradScalerUnscaleCUDA: Unscale finds an inf or NaN in gradients on
// the GPU (through its reduction there) as on the CPU, reports finite
// gradients as finite, and divides them by the scale on the device.
func TestGradScalerUnscaleCUDA(t *testing.T) {
	gpu(t)
	dev := tensor.CUDA(0)
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, c := range []struct {
		name string
		bad  float32
		want bool
	}{{"finite", 3, false}, {"+inf", inf, true}, {"-inf", -inf, true}, {"NaN", nan, true}} {
		for _, d := range []tensor.Device{tensor.CPU, dev} {
			a := tensor.Zeros(2, 3).To(d).RequiresGrad()
			b := tensor.Zeros(5).To(d).RequiresGrad()
			a.SetGrad(tensor.New([]float32{1, 2, 3, 4, 5, 6}, 2, 3).To(d))
			b.SetGrad(tensor.New([]float32{8, 16, c.bad, 32, 64}, 5).To(d))
			s := optim.NewGradScaler(optim.GradScalerConfig{InitScale: 8})
			if got := s.Unscale([]*tensor.Tensor{a, b}); got != c.want {
				t.Errorf("%s on %s: Unscale found inf %v, want %v", c.name, d, got, c.want)
			}
			if g := a.Grad(); g.Device() != d || !slices.Equal(g.Float32s(), []float32{0.125, 0.25, 0.375, 0.5, 0.625, 0.75}) {
				t.Errorf("%s on %s: unscaled gradient %v on %s, want the gradient / 8 on %s", c.name, d, g.Float32s(), g.Device(), d)
			}
		}
	}
}
