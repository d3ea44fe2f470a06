//go:build cuda

package tensor_test

import (
	"math"
	"os"
	"slices"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/tensor"
)

// needCUDA skips the test without a usable GPU (or fails it under
// WICK_REQUIRE_GPU=1).
func needCUDA(t *testing.T, cpuTest string) {
	t.Helper()
	if _, err := cuda.Open(0); err != nil || !cuda.Available() {
		if os.Getenv("WICK_REQUIRE_GPU") == "1" {
			t.Fatalf("cuda: no usable GPU: %v (WICK_REQUIRE_GPU=1: a missing GPU fails the test)", err)
		}
		t.Skipf("cuda: no usable GPU (%v); autocast runs on the CPU in %s", err, cpuTest)
	}
}

// nearScaled fails unless got and want (float32 tensors of one shape, on
// any device) agree within rtol of the largest |want|.
func nearScaled(t *testing.T, what string, got, want *tensor.Tensor, rtol float64) {
	t.Helper()
	if got == nil || want == nil {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	if !slices.Equal(got.Shape(), want.Shape()) || got.DType() != tensor.Float32 {
		t.Fatalf("%s: got %s %v, want float32 %v", what, got.DType(), got.Shape(), want.Shape())
	}
	g, w := got.Float32s(), want.Float32s()
	var scale float64
	for _, v := range w {
		scale = max(scale, math.Abs(float64(v)))
	}
	for i := range w {
		if d := math.Abs(float64(g[i]) - float64(w[i])); !(d <= rtol*scale) {
			t.Fatalf("%s[%d] = %v, want %v (|diff| %.3g > %.3g)", what, i, g[i], w[i], d, rtol*scale)
		}
	}
}

// leaves returns fresh leaves that require gradients with copies of xs'
// values on dev (To(CPU) of a CPU tensor is the tensor itself).
func leaves(dev tensor.Device, xs ...*tensor.Tensor) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(xs))
	for i, x := range xs {
		out[i] = x.Detach().Clone().To(dev).RequiresGrad()
	}
	return out
}

// TestAutocastCUDA runs autocast regions on the GPU against the same
// regions on the CPU, in bfloat16 and float16: MatMul (a batch folded
// into rows, broadcast batch dims, 1-D operands) and its gradients, where
// both devices multiply the same rounded operands and the same rounded
// output gradient and differ only in the order of their float32 sums
// (cublasGemmEx with float32 compute on the GPU); the attention
// operations (AttentionQKV, CausalAttention) and LinearCrossEntropy,
// composed from such products on the GPU, within the dtype's rounding of
// the probabilities and logits' gradients; every result and gradient
// float32 on the GPU, and different from the float32 products' (the
// operands were rounded).
func TestAutocastCUDA(t *testing.T) {
	needCUDA(t, "TestAutocastMatMul and TestAutocastAttention")
	dev := tensor.CUDA(0)
	onGPU := func(t *testing.T, what string, xs ...*tensor.Tensor) {
		t.Helper()
		for _, x := range xs {
			if x == nil || x.Device() != dev || x.DType() != tensor.Float32 {
				t.Fatalf("%s: got %v, want a float32 tensor on %s", what, x, dev)
			}
		}
	}
	for _, dt := range []tensor.DType{tensor.BFloat16, tensor.Float16} {
		t.Run(dt.String(), func(t *testing.T) {
			t.Run("MatMul", func(t *testing.T) {
				gen := tensor.NewGenerator(28)
				for _, c := range []struct{ a, b []int }{
					{[]int{5, 7}, []int{7, 3}},
					{[]int{2, 4, 7}, []int{7, 3}},
					{[]int{2, 1, 4, 7}, []int{3, 7, 5}},
					{[]int{7}, []int{7, 4}},
					{[]int{3, 7}, []int{7}},
				} {
					a, b := gen.Randn(c.a...), gen.Randn(c.b...)
					var ys [2]*tensor.Tensor
					var grads [2][]*tensor.Tensor
					var g *tensor.Tensor
					for i, d := range []tensor.Device{tensor.CPU, dev} {
						l := leaves(d, a, b)
						tensor.Autocast(dt, func() { ys[i] = l[0].MatMul(l[1]) })
						if g == nil {
							g = gen.Randn(ys[i].Shape()...)
						}
						ys[i].BackwardWith(g.To(d))
						grads[i] = []*tensor.Tensor{l[0].Grad(), l[1].Grad()}
					}
					onGPU(t, "product", ys[1], grads[1][0], grads[1][1])
					if !ys[1].IsRequiringGrad() {
						t.Fatalf("%v·%v: the product on %s is not recorded", c.a, c.b, dev)
					}
					nearScaled(t, "product", ys[1], ys[0], 1e-5)
					nearScaled(t, "grad a", grads[1][0], grads[0][0], 1e-5)
					nearScaled(t, "grad b", grads[1][1], grads[0][1], 1e-5)
					if slices.Equal(ys[1].Float32s(), a.To(dev).MatMul(b.To(dev)).Float32s()) {
						t.Errorf("%v·%v on %s: the product equals the float32 one: operands not rounded", c.a, c.b, dev)
					}
				}
			})
			t.Run("Attention", func(t *testing.T) {
				gen := tensor.NewGenerator(11)
				qkv := gen.Randn(2, 5, 3*8)
				q, k, v := gen.Randn(1, 4, 3, 4), gen.Randn(1, 2, 3, 4), gen.Randn(1, 2, 3, 4)
				ops := []struct {
					name string
					in   []*tensor.Tensor
					f    func(in []*tensor.Tensor) *tensor.Tensor
				}{
					{"AttentionQKV", []*tensor.Tensor{qkv}, func(in []*tensor.Tensor) *tensor.Tensor { return tensor.AttentionQKV(in[0], 2, true) }},
					{"CausalAttention", []*tensor.Tensor{q, k, v}, func(in []*tensor.Tensor) *tensor.Tensor { return tensor.CausalAttention(in[0], in[1], in[2], 0) }},
				}
				for _, op := range ops {
					var ys [2]*tensor.Tensor
					var grads [2][]*tensor.Tensor
					for i, d := range []tensor.Device{tensor.CPU, dev} {
						l := leaves(d, op.in...)
						tensor.Autocast(dt, func() { ys[i] = op.f(l) })
						ys[i].Square().Sum().Backward()
						for _, x := range l {
							grads[i] = append(grads[i], x.Grad())
						}
					}
					onGPU(t, op.name, append([]*tensor.Tensor{ys[1]}, grads[1]...)...)
					nearScaled(t, op.name, ys[1], ys[0], 1e-2)
					for j := range grads[0] {
						nearScaled(t, op.name+" gradient", grads[1][j], grads[0][j], 1e-2)
					}
					var plain *tensor.Tensor
					autograd.NoGrad(func() { plain = op.f(leaves(dev, op.in...)) })
					if slices.Equal(ys[1].Float32s(), plain.Float32s()) {
						t.Errorf("%s on %s inside a region equals the float32 one: operands not rounded", op.name, dev)
					}
				}
			})
			t.Run("LinearCrossEntropy", func(t *testing.T) {
				gen := tensor.NewGenerator(5)
				x, w := gen.Randn(6, 8), gen.Randn(11, 8)
				tg := tensor.FromInts([]int{1, 0, 10, 4, -100, 7}, 6)
				var loss [2]*tensor.Tensor
				var grads [2][]*tensor.Tensor
				for i, d := range []tensor.Device{tensor.CPU, dev} {
					l := leaves(d, x, w)
					tensor.Autocast(dt, func() { loss[i] = tensor.LinearCrossEntropy(l[0], l[1], tg.To(d), -100) })
					loss[i].Backward()
					grads[i] = []*tensor.Tensor{l[0].Grad(), l[1].Grad()}
				}
				onGPU(t, "LinearCrossEntropy", loss[1], grads[1][0], grads[1][1])
				nearScaled(t, "loss", loss[1], loss[0], 1e-5)
				nearScaled(t, "grad x", grads[1][0], grads[0][0], 1e-2)
				nearScaled(t, "grad weight", grads[1][1], grads[0][1], 1e-2)
				plain := tensor.LinearCrossEntropy(x.To(dev), w.To(dev), tg.To(dev), -100)
				if loss[1].Item() == plain.Item() {
					t.Errorf("LinearCrossEntropy on %s inside a region equals the float32 one: operands not rounded", dev)
				}
			})
		})
	}
}

// TestAutocastCastsParameterOnceCUDA: a GPU parameter read by several
// products of one region, directly and through views (Linear's Wᵀ), is
// cast once, into one copy of the region's dtype on the GPU; its
// gradient (the sum over the uses) matches the CPU region's; and the
// next region casts the parameter's new values.
func TestAutocastCastsParameterOnceCUDA(t *testing.T) {
	needCUDA(t, "TestAutocastCastsParameterOnce")
	dev := tensor.CUDA(0)
	gen := tensor.NewGenerator(7)
	w0, x0 := gen.Randn(4, 6), gen.Randn(3, 6)
	for _, dt := range []tensor.DType{tensor.BFloat16, tensor.Float16} {
		var grads [2]*tensor.Tensor
		for i, d := range []tensor.Device{tensor.CPU, dev} {
			w, x := leaves(d, w0)[0], x0.To(d)
			var y *tensor.Tensor
			var first, all []tensor.Storage
			tensor.Autocast(dt, func() {
				h := x.MatMul(w.T()) // [3, 4], through a view first
				first = tensor.AutocastCopies()
				y = h.MatMul(w).Add(x.MatMul(w.Transpose(0, 1)).MatMul(w)) // w four times
				all = tensor.AutocastCopies()
			})
			if len(first) != 1 || len(all) != 1 || all[0] == nil || all[0] != first[0] {
				t.Fatalf("%s on %s: the region holds %d copies after the first product and %d after four (the same: %v); want one, made by the first", dt, d, len(first), len(all), len(all) == 1 && len(first) == 1 && all[0] == first[0])
			}
			if c := all[0]; c.Device() != d || c.DType() != dt || c.Len() != 24 {
				t.Fatalf("%s on %s: the parameter's copy is %s %s of %d elements, want %s %s of 24", dt, d, c.Device(), c.DType(), c.Len(), d, dt)
			}
			if got := tensor.AutocastCopies(); got != nil {
				t.Fatalf("%d copies outside the region", len(got))
			}
			y.Sum().Backward()
			grads[i] = w.Grad()

			// a new region casts the parameter's new values
			autograd.NoGrad(func() { w.Fill_(0.5) })
			var z *tensor.Tensor
			tensor.Autocast(dt, func() { z = x.MatMul(w.T()) })
			want := x0.ToDType(dt).ToDType(tensor.Float32).MatMul(tensor.Full(0.5, 6, 4))
			nearScaled(t, "after an update", z, want, 1e-6)
		}
		if grads[1].Device() != dev {
			t.Fatalf("%s: the gradient is on %s, want %s", dt, grads[1].Device(), dev)
		}
		nearScaled(t, dt.String()+" grad w", grads[1], grads[0], 1e-5)
	}
}
