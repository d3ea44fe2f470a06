//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// trainGPT trains a small GPT for steps steps on one batch on dev from a
// fixed seed (weights and batch come from the global generator, so every
// device sees the same numbers; dropout is off, as its masks differ
// between devices) and returns the losses.
func trainGPT(t testing.TB, dev tensor.Device, steps int) (losses []float32) {
	onDevice(t, dev, 1337, func() {
		cfg := nn.GPTConfig{VocabSize: 65, BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 32, Dropout: 0, Bias: true}
		model := nn.NewGPT(cfg)
		opt := optim.NewAdamWGroups(optim.DecayGroups(model.Parameters(), 0.1), optim.AdamWConfig{LR: 1e-3, Beta2: 0.99})
		x := tensor.RandInt(0, cfg.VocabSize, 4, cfg.BlockSize)
		y := tensor.RandInt(0, cfg.VocabSize, 4, cfg.BlockSize)
		for range steps {
			loss := model.Loss(x, y)
			opt.ZeroGrad()
			loss.Backward()
			optim.ClipGradNorm(model.Parameters(), 1)
			opt.Step()
			losses = append(losses, loss.Item())
		}
	})
	return losses
}

// TestGPTTrainingMatchesCPU trains a small GPT (2 layers) for five steps on
// the GPU and on the CPU: the losses agree to 1e-4.
func TestGPTTrainingMatchesCPU(t *testing.T) {
	gpu(t)
	gl := trainGPT(t, tensor.CUDA(0), 5)
	cl := trainGPT(t, tensor.CPU, 5)
	t.Logf("GPU losses %v\nCPU losses %v", gl, cl)
	approx.Equal(t, "loss", gl, cl, 1e-4, 0)
	if !(gl[4] < gl[0]) {
		t.Errorf("the loss did not fall in five steps on one batch: %v", gl)
	}
}

// TestMemoryFlat runs 1000 training steps of a small MLP and checks that
// the allocator's reserved memory stops growing after warm-up: every step
// reuses the blocks of the tensors that the previous steps dropped.
func TestMemoryFlat(t *testing.T) {
	gpu(t)
	onDevice(t, tensor.CUDA(0), 3, func() {
		l1, l2 := nn.NewLinear(256, 512, true), nn.NewLinear(512, 10, true)
		params := append(l1.Parameters(), l2.Parameters()...)
		opt := optim.NewAdamW(params, optim.AdamWConfig{LR: 1e-3})
		x := tensor.Randn(128, 256)
		y := tensor.RandInt(0, 10, 128)
		var reserved []int64
		var last float32
		for step := range 1000 {
			loss := tensor.CrossEntropy(l2.Forward(l1.Forward(x).GELU()), y)
			opt.ZeroGrad()
			loss.Backward()
			opt.Step()
			if step%100 == 99 {
				last = loss.Item()
				s, err := Memory(0)
				if err != nil {
					t.Fatal(err)
				}
				reserved = append(reserved, s.Reserved)
			}
		}
		t.Logf("reserved every 100 steps: %v (final loss %v)", reserved, last)
		if math.IsNaN(float64(last)) || last > 1 {
			t.Errorf("the MLP did not fit its batch: loss %v", last)
		}
		warm := reserved[2] // after 300 steps
		for i, r := range reserved[3:] {
			if r > warm {
				t.Errorf("reserved memory grew after warm-up: %d bytes at step %d, %d at step 300", r, (i+4)*100, warm)
			}
		}
	})
}

// TestOptimizersMatchCPU takes five steps of each optimizer on the GPU and
// on the CPU from the same parameters and gradients: the parameters agree
// (the GPU's SGD runs as device tensor operations, the CPU's with fused
// multiply-adds, so they may differ in the last bits).
func TestOptimizersMatchCPU(t *testing.T) {
	gpu(t)
	r := newRNG(t)
	init := [][]float32{randn(r, 35), randn(r, 7)}
	shapes := [][]int{{5, 7}, {7}}
	var grads [][][]float32
	for range 5 {
		grads = append(grads, [][]float32{randn(r, 35), randn(r, 7)})
	}
	makers := []struct {
		name string
		make func([]*tensor.Tensor) optim.Optimizer
	}{
		{"SGD", func(p []*tensor.Tensor) optim.Optimizer {
			return optim.NewSGD(p, optim.SGDConfig{LR: 0.1})
		}},
		{"SGD momentum weight decay", func(p []*tensor.Tensor) optim.Optimizer {
			return optim.NewSGD(p, optim.SGDConfig{LR: 0.1, Momentum: 0.9, WeightDecay: 0.01})
		}},
		{"SGD Nesterov", func(p []*tensor.Tensor) optim.Optimizer {
			return optim.NewSGD(p, optim.SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true})
		}},
		{"Adam", func(p []*tensor.Tensor) optim.Optimizer {
			return optim.NewAdam(p, optim.AdamConfig{LR: 0.01})
		}},
		{"AdamW groups", func(p []*tensor.Tensor) optim.Optimizer {
			return optim.NewAdamWGroups(optim.DecayGroups(p, 0.1), optim.AdamWConfig{LR: 0.01})
		}},
	}
	for _, m := range makers {
		run := func(dev tensor.Device) [][]float32 {
			var params []*tensor.Tensor
			for i, v := range init {
				params = append(params, tensor.New(v, shapes[i]...).To(dev).RequiresGrad())
			}
			opt := m.make(params)
			for _, gs := range grads {
				for i, p := range params {
					p.SetGrad(tensor.New(gs[i], shapes[i]...).To(dev))
				}
				if dev.Kind == tensor.KindCUDA {
					d, _ := openDevice(dev.Index)
					before := d.copies.Load()
					opt.Step()
					if n := d.copies.Load() - before; n != 0 {
						t.Errorf("%s: a step on the GPU copied between host and device %d times", m.name, n)
					}
				} else {
					opt.Step()
				}
			}
			var out [][]float32
			for _, p := range params {
				if p.Device() != dev {
					t.Fatalf("%s moved a parameter from %s to %s", m.name, dev, p.Device())
				}
				out = append(out, p.Float32s())
			}
			return out
		}
		g, c := run(tensor.CUDA(0)), run(tensor.CPU)
		for i := range g {
			approx.Equal(t, fmt.Sprintf("%s param %d", m.name, i), g[i], c[i], 1e-5, 2e-7)
		}
	}
}
