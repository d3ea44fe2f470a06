package tensor_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

// cube is x³ computed on raw float32 slices, with the gradient 3x²·g
// written with tensor operations.
var cube = &tensor.Function{
	Name: "Cube",
	Forward: func(ctx *tensor.FunctionContext, in []*tensor.Tensor) []*tensor.Tensor {
		x := in[0]
		ctx.SaveForBackward(x)
		d := x.Float32s()
		for i, v := range d {
			d[i] = v * v * v
		}
		return []*tensor.Tensor{tensor.NewOn(x.Device(), d, x.Shape()...)}
	},
	Backward: func(ctx *tensor.FunctionContext, grads []*tensor.Tensor) []*tensor.Tensor {
		x := ctx.SavedTensors()[0]
		return []*tensor.Tensor{grads[0].Mul(x.Square()).MulScalar(3)}
	},
}

// prodSum returns (x·y, x+y, argmax of x): two differentiable outputs and
// an Int64 one; it records whether its inputs needed gradients.
var prodSum = &tensor.Function{
	Name: "ProdSum",
	Forward: func(ctx *tensor.FunctionContext, in []*tensor.Tensor) []*tensor.Tensor {
		ctx.SaveForBackward(in[0], in[1])
		ctx.Set("needs", []bool{ctx.NeedsInputGrad(0), ctx.NeedsInputGrad(1)})
		return []*tensor.Tensor{in[0].Mul(in[1]), in[0].Add(in[1]), in[0].ArgMax()}
	},
	Backward: func(ctx *tensor.FunctionContext, g []*tensor.Tensor) []*tensor.Tensor {
		x, y := ctx.SavedTensors()[0], ctx.SavedTensors()[1]
		if g[2] != nil {
			panic("the Int64 output got a gradient")
		}
		var gx, gy *tensor.Tensor
		if ctx.NeedsInputGrad(0) {
			gx = g[0].Mul(y).Add(g[1])
		}
		if ctx.NeedsInputGrad(1) {
			gy = g[0].Mul(x).Add(g[1])
		}
		return []*tensor.Tensor{gx, gy}
	},
}

func TestFunction(t *testing.T) { testFunctionOn(t, tensor.CPU) }

// testFunctionOn runs the custom-function tests with the inputs on dev.
func testFunctionOn(t *testing.T, dev tensor.Device) {
	tensor.ManualSeed(3)
	x := tensor.Randn(3, 4).To(dev)
	if err := tensor.GradCheck(func(in []*tensor.Tensor) *tensor.Tensor { return cube.Apply(in[0]) },
		[]*tensor.Tensor{x}, tensor.GradCheckOptions{}); err != nil {
		t.Errorf("Cube: %v", err)
	}
	// composed with built-in operations on both sides, on a strided input
	a := tensor.Randn(4, 3).To(dev)
	if err := tensor.GradCheck(func(in []*tensor.Tensor) *tensor.Tensor {
		return cube.Apply(in[0].T().Tanh()).MulScalar(2).Exp()
	}, []*tensor.Tensor{a}, tensor.GradCheckOptions{}); err != nil {
		t.Errorf("Exp(2·Cube(Tanh(aᵀ))): %v", err)
	}
	y := tensor.Randn(3, 4).To(dev)
	if err := tensor.GradCheck(func(in []*tensor.Tensor) *tensor.Tensor {
		outs := prodSum.ApplyN(in[0], in[1])
		return outs[0].Mul(outs[1])
	}, []*tensor.Tensor{x, y}, tensor.GradCheckOptions{}); err != nil {
		t.Errorf("ProdSum, both outputs: %v", err)
	}
	// only the second output used: the first gets a zero gradient
	if err := tensor.GradCheck(func(in []*tensor.Tensor) *tensor.Tensor {
		return prodSum.ApplyN(in[0], in[1])[1].Square()
	}, []*tensor.Tensor{x, y}, tensor.GradCheckOptions{}); err != nil {
		t.Errorf("ProdSum, second output: %v", err)
	}

	// against the built-in operations, with a leaf that does not require grad
	xl := x.Clone().RequiresGrad()
	outs := prodSum.ApplyN(xl, y)
	if len(outs) != 3 || outs[2].DType() != tensor.Int64 || outs[2].IsRequiringGrad() {
		t.Fatalf("ProdSum outputs: %v", outs)
	}
	if outs[0].GradFn() == nil || outs[0].GradFn() != outs[1].GradFn() || outs[0].GradFn().Op != "ProdSum" {
		t.Errorf("the two float outputs should share one ProdSum node, got %v and %v", outs[0].GradFn(), outs[1].GradFn())
	}
	if !strings.Contains(outs[0].String(), "grad_fn=<ProdSumBackward0>") {
		t.Errorf("printed output lacks its grad_fn: %s", outs[0])
	}
	outs[0].Add(outs[1]).Sum().Backward()
	want := y.AddScalar(1).Float32s()
	approx.Equal(t, "dx", xl.Grad().Float32s(), want, 1e-6, 1e-6)
	if outs[0].Device() != dev || xl.Grad().Device() != dev {
		t.Errorf("output on %s and gradient on %s, want %s", outs[0].Device(), xl.Grad().Device(), dev)
	}
}

func TestFunctionNoRecording(t *testing.T) {
	x := tensor.New([]float32{1, 2}).RequiresGrad()
	var y *tensor.Tensor
	autograd.NoGrad(func() { y = cube.Apply(x) })
	if y.IsRequiringGrad() || y.GradFn() != nil {
		t.Errorf("inside NoGrad the output should not require grad: %s", y)
	}
	// without inputs that require grad, Backward may be nil
	noBackward := &tensor.Function{Forward: func(_ *tensor.FunctionContext, in []*tensor.Tensor) []*tensor.Tensor {
		if in[0].IsRequiringGrad() || autograd.Enabled() {
			t.Errorf("Forward should see detached inputs with recording off")
		}
		return []*tensor.Tensor{in[0].MulScalar(2)}
	}}
	if got := noBackward.Apply(tensor.New([]float32{3})).Item(); got != 6 {
		t.Errorf("got %v, want 6", got)
	}
	// Forward does not record even when its inputs require grad
	var fwdRecorded bool
	probe := &tensor.Function{
		Forward: func(_ *tensor.FunctionContext, in []*tensor.Tensor) []*tensor.Tensor {
			fwdRecorded = autograd.Enabled() || in[0].IsRequiringGrad()
			return []*tensor.Tensor{in[0].MulScalar(2)}
		},
		Backward: func(_ *tensor.FunctionContext, g []*tensor.Tensor) []*tensor.Tensor {
			return []*tensor.Tensor{g[0].MulScalar(2)}
		},
	}
	out := probe.Apply(x)
	if fwdRecorded {
		t.Error("Forward ran with recording on or with inputs that require grad")
	}
	out.Sum().Backward()
	if got := x.Grad().Float32s(); got[0] != 2 || got[1] != 2 {
		t.Errorf("dx = %v, want [2 2]", got)
	}
}

func TestFunctionPanics(t *testing.T) {
	x := tensor.New([]float32{1, 2}).RequiresGrad()
	identity := func(ctx *tensor.FunctionContext, in []*tensor.Tensor) []*tensor.Tensor {
		return []*tensor.Tensor{in[0].MulScalar(1)}
	}
	cases := map[string]struct {
		f    func()
		want string
	}{
		"no Forward": {func() { (&tensor.Function{Name: "F"}).Apply(x) }, "F: Function has no Forward"},
		"no Backward": {func() { (&tensor.Function{Name: "F", Forward: identity}).Apply(x) },
			"F: Function has no Backward"},
		"two outputs to Apply": {func() {
			(&tensor.Function{Forward: func(_ *tensor.FunctionContext, in []*tensor.Tensor) []*tensor.Tensor {
				return []*tensor.Tensor{in[0], in[0].Neg()}
			}}).Apply(tensor.Zeros(1))
		}, "Function: Apply expects Forward to return one output, got 2"},
		"same output twice": {func() {
			(&tensor.Function{Forward: func(_ *tensor.FunctionContext, in []*tensor.Tensor) []*tensor.Tensor {
				return []*tensor.Tensor{in[0], in[0]}
			}}).ApplyN(tensor.Zeros(1))
		}, "returned output 1 (shape [1]) twice"},
		"wrong gradient shape": {func() {
			f := &tensor.Function{Name: "Bad", Forward: identity, Backward: func(_ *tensor.FunctionContext, g []*tensor.Tensor) []*tensor.Tensor {
				return []*tensor.Tensor{tensor.Zeros(3)}
			}}
			f.Apply(x).Sum().Backward()
		}, "Bad: Backward returned a gradient of shape [3] for input 0 of shape [2]"},
		"wrong gradient count": {func() {
			f := &tensor.Function{Name: "Bad", Forward: identity, Backward: func(_ *tensor.FunctionContext, g []*tensor.Tensor) []*tensor.Tensor {
				return nil
			}}
			f.Apply(x).Sum().Backward()
		}, "Bad: Backward returned 0 gradients for 1 inputs"},
	}
	for name, c := range cases {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a *tensor.Error containing %q", name, err, c.want)
		}
	}
}

func TestRetainGrad(t *testing.T) {
	w := tensor.New([]float32{1, -2, 3}).RequiresGrad()
	h := w.MulScalar(2) // not retained
	r := h.Tanh()       // retained
	if r.RetainGrad() != r || !r.RetainsGrad() || h.RetainsGrad() {
		t.Fatal("RetainGrad should mark r only")
	}
	r.RetainGrad() // twice is once
	loss := r.Mul(r).Sum()
	loss.RetainGrad()
	loss.Backward()
	if h.Grad() != nil {
		t.Errorf("a non-leaf without RetainGrad has Grad %v, want nil", h.Grad())
	}
	rv := r.Float32s()
	got := r.Grad().Float32s()
	for i := range rv {
		if !approx.Scalar(float64(got[i]), float64(2*rv[i]), 0, 1e-6) {
			t.Errorf("r.Grad()[%d] = %v, want %v", i, got[i], 2*rv[i])
		}
	}
	if g := loss.Grad(); g == nil || g.Item() != 1 {
		t.Errorf("the root's retained gradient is %v, want 1", g)
	}
	if w.Grad() == nil {
		t.Error("the leaf lost its gradient")
	}
	// on a leaf it does nothing; on a tensor without grad it panics
	if w.RetainGrad() != w || w.RetainsGrad() {
		t.Error("RetainGrad on a leaf should do nothing")
	}
	err := tensor.Catch(func() { tensor.Zeros(2).RetainGrad() })
	if err == nil || !strings.Contains(err.Error(), "RetainGrad") {
		t.Errorf("RetainGrad on a tensor without grad: got %v, want a panic", err)
	}
	// a retained output of a Function, through the second output
	x := tensor.New([]float32{1, 2}).RequiresGrad()
	outs := prodSum.ApplyN(x, tensor.New([]float32{3, 4}))
	outs[0].RetainGrad()
	outs[1].RetainGrad()
	outs[1].MulScalar(5).Sum().Backward()
	if g := outs[1].Grad().Float32s(); g[0] != 5 || g[1] != 5 {
		t.Errorf("retained gradient of output 1 = %v, want [5 5]", g)
	}
	if g := outs[0].Grad(); g != nil {
		t.Errorf("output 0 took no part in the loss, but its retained gradient is %v (PyTorch: None)", g)
	}
}

func TestInPlaceOnLeafThatRequiresGrad(t *testing.T) {
	w := tensor.Zeros(2, 3).RequiresGrad()
	ops := map[string]func(*tensor.Tensor){
		"Fill_":       func(p *tensor.Tensor) { p.Fill_(1) },
		"CopyFrom":    func(p *tensor.Tensor) { p.CopyFrom(tensor.Ones(2, 3)) },
		"NormalInit":  func(p *tensor.Tensor) { p.NormalInit(0, 1) },
		"UniformInit": func(p *tensor.Tensor) { p.UniformInitWith(0, 1, tensor.NewGenerator(1)) },
		"AdamWUpdate": func(p *tensor.Tensor) {
			tensor.AdamWUpdate(p, tensor.Ones(2, 3), tensor.Zeros(2, 3), tensor.Zeros(2, 3), tensor.AdamWStep{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 1})
		},
	}
	for name, op := range ops {
		err := tensor.Catch(func() { op(w) })
		if err == nil || !strings.Contains(err.Error(), "tensor: "+name+": a leaf tensor of shape [2 3] that requires grad is being used in an in-place operation") {
			t.Errorf("%s on a leaf that requires grad: got %v, want a panic", name, err)
		}
		// allowed inside NoGrad, through a detached view, and on a leaf
		// without grad
		for how, f := range map[string]func(){
			"NoGrad":  func() { autograd.NoGrad(func() { op(w) }) },
			"Detach":  func() { op(w.Detach()) },
			"no grad": func() { op(tensor.Zeros(2, 3)) },
		} {
			if err := tensor.Catch(f); err != nil {
				t.Errorf("%s (%s): %v", name, how, err)
			}
		}
	}
	// a recorded result: in-place writes are not recorded either
	h := w.MulScalar(2)
	if err := tensor.Catch(func() { h.Fill_(0) }); err == nil || !strings.Contains(err.Error(), "recorded result of MulScalar") {
		t.Errorf("Fill_ on a recorded result: got %v", err)
	}
	// NoGrad on another goroutine does not allow it on this one
	inside, done := make(chan struct{}), make(chan struct{})
	go autograd.NoGrad(func() { close(inside); <-done })
	<-inside
	err := tensor.Catch(func() { w.Fill_(0) })
	close(done)
	if err == nil {
		t.Error("another goroutine's NoGrad allowed an in-place write here")
	}
}

// TestFunctionConcurrent applies one Function value on several goroutines
// at once, each with its own inputs and graph, one of them inside NoGrad:
// each gets the gradients it would get alone.
func TestFunctionConcurrent(t *testing.T) {
	const n = 4
	errs := make(chan string, n)
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			x := tensor.Full(float32(i+1), 3).RequiresGrad()
			if i == 0 {
				var y *tensor.Tensor
				autograd.NoGrad(func() { y = cube.Apply(x) })
				if y.IsRequiringGrad() {
					errs <- "inside NoGrad the output requires grad"
				}
				return
			}
			for range 20 {
				x.ZeroGrad()
				cube.Apply(x).Sum().Backward()
				want := float32(3 * (i + 1) * (i + 1))
				for _, g := range x.Grad().Float32s() {
					if g != want {
						errs <- "wrong gradient"
						return
					}
				}
			}
		}()
	}
	for range n {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
