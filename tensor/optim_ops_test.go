package tensor_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

// TestAdamWUpdate checks the fused update against the rule written out with
// float64 arithmetic, and that a strided gradient gives the same result as
// its contiguous copy.
func TestAdamWUpdate(t *testing.T) {
	c := tensor.AdamWStep{LR: 0.01, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1, Step: 3}
	p0 := []float32{0.5, -1, 2, 0, 3, -0.25}
	g0 := []float32{0.1, 0.2, -0.3, 0.4, -0.5, 0.6}
	m0 := []float32{0.01, -0.02, 0.03, 0, 0.05, -0.06}
	v0 := []float32{0.001, 0.002, 0.003, 0.004, 0.005, 0.006}
	run := func(grad *tensor.Tensor) (p, m, v *tensor.Tensor) {
		p, m, v = tensor.New(slices.Clone(p0), 2, 3), tensor.New(slices.Clone(m0), 2, 3), tensor.New(slices.Clone(v0), 2, 3)
		tensor.AdamWUpdate(p, grad, m, v, c)
		return p, m, v
	}
	p, m, v := run(tensor.New(g0, 2, 3))
	for i := range p0 {
		g := float64(g0[i])
		mm := 0.9*float64(m0[i]) + 0.1*g
		vv := 0.99*float64(v0[i]) + 0.01*g*g
		want := float64(p0[i])*(1-0.01*0.1) - 0.01/(1-math.Pow(0.9, 3))*mm/(math.Sqrt(vv)/math.Sqrt(1-math.Pow(0.99, 3))+1e-8)
		if got := float64(p.Float32s()[i]); !approx.Scalar(got, want, 1e-6, 1e-7) {
			t.Errorf("param[%d] = %v, want %v", i, got, want)
		}
		if got := float64(m.Float32s()[i]); !approx.Scalar(got, mm, 0, 1e-6) {
			t.Errorf("m[%d] = %v, want %v", i, got, mm)
		}
		if got := float64(v.Float32s()[i]); !approx.Scalar(got, vv, 0, 1e-6) {
			t.Errorf("v[%d] = %v, want %v", i, got, vv)
		}
	}
	// the same gradient as a transposed view
	gt := tensor.New([]float32{0.1, 0.4, 0.2, -0.5, -0.3, 0.6}, 3, 2).T()
	p2, _, _ := run(gt)
	if !slices.Equal(p2.Float32s(), p.Float32s()) {
		t.Errorf("strided gradient gives %v, contiguous %v", p2.Float32s(), p.Float32s())
	}
	if err := tensor.Catch(func() { run(tensor.Zeros(3, 2)) }); err == nil {
		t.Error("no panic for a gradient of the wrong shape")
	}
	if err := tensor.Catch(func() {
		tensor.AdamWUpdate(tensor.Zeros(4, 4).T(), tensor.Zeros(4, 4), tensor.Zeros(4, 4), tensor.Zeros(4, 4), c)
	}); err == nil {
		t.Error("no panic for a non-contiguous parameter")
	}
}

// TestGlobalNorm checks the joint norm of several tensors, strided and
// empty ones included, and its panics.
func TestGlobalNorm(t *testing.T) {
	a := tensor.New([]float32{3, 0, 4, 0}, 2, 2)
	b := tensor.New([]float32{12}, 1)
	e := tensor.Zeros(0, 3)
	col := a.T().Narrow(0, 0, 1) // [3, 4] through a strided view
	n := tensor.GlobalNorm([]*tensor.Tensor{col, b, e})
	if n.Dim() != 0 || n.Item() != 13 {
		t.Errorf("GlobalNorm([3 4], [12], []): got %v (shape %v), want 13", n.Item(), n.Shape())
	}
	if got := tensor.GlobalNorm([]*tensor.Tensor{e}).Item(); got != 0 {
		t.Errorf("GlobalNorm of an empty tensor: got %v, want 0", got)
	}
	// the squares are summed in float64: 1e20² would overflow float32
	if got := tensor.GlobalNorm([]*tensor.Tensor{tensor.Full(1e20, 4)}).Item(); got != 2e20 {
		t.Errorf("GlobalNorm of four 1e20s: got %v, want 2e20", got)
	}
	for name, f := range map[string]func(){
		"no tensors": func() { tensor.GlobalNorm(nil) },
		"int64":      func() { tensor.GlobalNorm([]*tensor.Tensor{b, tensor.FromInts([]int{1}, 1)}) },
	} {
		if err := tensor.Catch(f); err == nil || !strings.Contains(err.Error(), "GlobalNorm") {
			t.Errorf("GlobalNorm with %s: got %v, want a panic naming GlobalNorm", name, err)
		}
	}
}
