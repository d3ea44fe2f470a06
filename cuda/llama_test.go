//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// fusedOnBoth runs f on inputs made by mk on the GPU and on the CPU (the
// same values: drawn on the CPU, then copied), backpropagates the same
// random gradient through both, and compares the outputs and every
// input's gradient. The backend suite checks the kernels; this checks the
// tensor-level ops that call them (layouts, views, saved values).
func fusedOnBoth(t *testing.T, name string, mk func(gen *tensor.Generator) []*tensor.Tensor, f func([]*tensor.Tensor) *tensor.Tensor) {
	t.Helper()
	run := func(dev tensor.Device) (vals []*tensor.Tensor) {
		gen := tensor.NewGenerator(21)
		ins := mk(gen)
		for i, x := range ins {
			ins[i] = x.To(dev).Detach().RequiresGrad()
		}
		y := f(ins)
		g := gen.Randn(y.Shape()...).To(dev)
		y.BackwardWith(g)
		vals = append(vals, y.To(tensor.CPU))
		for _, x := range ins {
			if x.Grad() == nil { // an input f detaches
				vals = append(vals, nil)
				continue
			}
			vals = append(vals, x.Grad().To(tensor.CPU))
		}
		return vals
	}
	gv, cv := run(tensor.CUDA(0)), run(tensor.CPU)
	for i := range gv {
		what := name + " output"
		if i > 0 {
			what = fmt.Sprintf("%s grad of input %d", name, i-1)
		}
		if gv[i] == nil || cv[i] == nil {
			if gv[i] != cv[i] {
				t.Errorf("%s: a gradient on one device only", what)
			}
			continue
		}
		approx.EqualTensor(t, what, gv[i], cv[i], 1e-4, 1e-5)
	}
}

// TestFusedLlamaOps runs RMSNorm, ApplyRotary on heads viewed through
// strides, SwiGLU and grouped-query CausalAttention (ratios 1, 3 and H,
// offsets, keys read from a cache slice) on the GPU's fused kernels and
// the CPU's, forward and backward.
func TestFusedLlamaOps(t *testing.T) {
	gpu(t)
	fusedOnBoth(t, "RMSNorm", func(g *tensor.Generator) []*tensor.Tensor {
		return []*tensor.Tensor{g.Randn(2, 7, 48).Slice(1, 1, 6), g.Randn(48)}
	}, func(in []*tensor.Tensor) *tensor.Tensor { return in[0].RMSNorm(in[1], 1e-6) })
	fusedOnBoth(t, "ApplyRotary", func(g *tensor.Generator) []*tensor.Tensor {
		return []*tensor.Tensor{g.Randn(2, 9, 3, 8).Transpose(1, 2), g.Randn(9, 8), g.Randn(9, 8)}
	}, func(in []*tensor.Tensor) *tensor.Tensor {
		return tensor.ApplyRotary(in[0], in[1].Detach(), in[2].Detach())
	})
	fusedOnBoth(t, "SwiGLU", func(g *tensor.Generator) []*tensor.Tensor {
		return []*tensor.Tensor{g.Randn(5, 33).MulScalar(3), g.Randn(33, 5).T()}
	}, func(in []*tensor.Tensor) *tensor.Tensor { return tensor.SwiGLU(in[0], in[1]) })
	for _, c := range []struct{ h, hkv, t, offset int }{{4, 4, 7, 0}, {6, 2, 7, 0}, {4, 1, 5, 0}, {6, 2, 1, 8}, {4, 1, 3, 4}} {
		fusedOnBoth(t, fmt.Sprintf("CausalAttention H=%d Hkv=%d T=%d offset=%d", c.h, c.hkv, c.t, c.offset), func(g *tensor.Generator) []*tensor.Tensor {
			s := c.offset + c.t
			return []*tensor.Tensor{g.Randn(2, c.t, c.h, 8).Transpose(1, 2), g.Randn(2, c.hkv, s+3, 8), g.Randn(2, s, c.hkv, 8).Transpose(1, 2)}
		}, func(in []*tensor.Tensor) *tensor.Tensor {
			// keys from a cache with room for 3 more positions
			return tensor.CausalAttention(in[0], in[1].Slice(2, 0, c.offset+c.t), in[2], c.offset)
		})
	}
}

// trainLlama trains a small Llama-family model (grouped-query attention,
// q/k/v biases, per-head q/k norms, an untied head) for steps steps on one
// batch on dev and returns the losses; the weights come from a generator
// on the CPU, so both devices start from the same numbers.
func trainLlama(t testing.TB, dev tensor.Device, steps int) (losses []float32) {
	cfg := nn.LlamaConfig{
		ModelType: "qwen3", VocabSize: 67, HiddenSize: 32, IntermediateSize: 48, NumHiddenLayers: 2,
		NumAttentionHeads: 6, NumKeyValueHeads: 2, HeadDim: 8, MaxPositionEmbeddings: 32,
		RMSNormEps: 1e-6, RopeTheta: 10000, QKVBias: true, QKNorm: true,
	}
	m := nn.NewLlamaWith(cfg, tensor.NewGenerator(5))
	if err := nn.To(m, dev); err != nil {
		t.Fatal(err)
	}
	gen := tensor.NewGenerator(6)
	x := gen.RandInt(0, cfg.VocabSize, 4, 16).To(dev)
	y := gen.RandInt(0, cfg.VocabSize, 4, 16).To(dev)
	opt := optim.NewAdamWGroups(optim.DecayGroups(m.Parameters(), 0.1), optim.AdamWConfig{LR: 3e-3, Beta2: 0.99})
	for range steps {
		loss := m.Loss(x, y)
		opt.ZeroGrad()
		loss.Backward()
		optim.ClipGradNorm(m.Parameters(), 1)
		opt.Step()
		if loss.Device() != dev {
			t.Fatalf("the loss is on %s, want %s", loss.Device(), dev)
		}
		losses = append(losses, loss.Item())
	}
	return losses
}

// TestLlamaTrainingMatchesCPU trains a small Qwen3-style model (6 query
// heads sharing 2 key/value heads) for five steps on the GPU and on the
// CPU: the losses agree to 1e-4.
func TestLlamaTrainingMatchesCPU(t *testing.T) {
	gpu(t)
	gl := trainLlama(t, tensor.CUDA(0), 5)
	cl := trainLlama(t, tensor.CPU, 5)
	t.Logf("GPU losses %v\nCPU losses %v", gl, cl)
	approx.Equal(t, "loss", gl, cl, 1e-4, 0)
	if !(gl[4] < gl[0]) {
		t.Errorf("the loss did not fall in five steps on one batch: %v", gl)
	}
}
