package optim_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

func bitsOf(ps []*tensor.Tensor) [][]uint32 {
	var out [][]uint32
	for _, p := range ps {
		var b []uint32
		for _, v := range p.Float32s() {
			b = append(b, math.Float32bits(v))
		}
		out = append(out, b)
	}
	return out
}

func sameBits(a, b [][]uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// TestStateRoundTripResumesExactly runs an optimizer for a few steps, saves
// its state through a safetensors stream, restores it into a fresh
// optimizer over a copy of the parameters, and checks that both then take
// identical steps.
func TestStateRoundTripResumesExactly(t *testing.T) {
	makers := map[string]func([]*tensor.Tensor) optim.Optimizer{
		"adamw": func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewAdamWGroups(optim.DecayGroups(ps, 0.1), optim.AdamWConfig{LR: 1e-2, Beta2: 0.99})
		},
		"adam": func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewAdam(ps, optim.AdamConfig{LR: 1e-2, WeightDecay: 0.01})
		},
		"sgd": func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewSGD(ps, optim.SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-3})
		},
	}
	for name, mk := range makers {
		t.Run(name, func(t *testing.T) {
			tensor.ManualSeed(5)
			shapes := [][]int{{4, 3}, {3}, {2, 2, 2}}
			var a []*tensor.Tensor
			for _, s := range shapes {
				a = append(a, tensor.Randn(s...).RequiresGrad())
			}
			optA := mk(a)
			grads := func() {
				for _, p := range a {
					p.SetGrad(tensor.Randn(p.Shape()...))
				}
			}
			for range 3 {
				grads()
				optA.Step()
			}
			// the third parameter gets no gradient at first in b's
			// history: state for it must still round-trip
			var buf bytes.Buffer
			if err := nn.WriteStateDict(&buf, optA.StateDict(), map[string]string{"step": "3"}); err != nil {
				t.Fatal(err)
			}
			state, _, err := nn.ReadStateDict(&buf)
			if err != nil {
				t.Fatal(err)
			}
			var b []*tensor.Tensor
			for _, p := range a {
				b = append(b, p.Detach().Clone().RequiresGrad())
			}
			optB := mk(b)
			if err := optB.LoadStateDict(state); err != nil {
				t.Fatal(err)
			}
			optB.SetLR(optA.LR())
			for range 3 {
				grads()
				for i := range a {
					b[i].SetGrad(a[i].Grad().Clone())
				}
				optA.Step()
				optB.Step()
			}
			if !sameBits(bitsOf(a), bitsOf(b)) {
				t.Error("the resumed optimizer took different steps")
			}
		})
	}
}

func TestLoadStateDictRejectsMismatches(t *testing.T) {
	p := tensor.Randn(2, 3).RequiresGrad()
	q := tensor.Randn(3).RequiresGrad()
	opt := optim.NewAdamW([]*tensor.Tensor{p, q}, optim.AdamWConfig{LR: 1e-3})
	p.SetGrad(tensor.Ones(2, 3))
	q.SetGrad(tensor.Ones(3))
	opt.Step()
	good := opt.StateDict()
	if len(good) != 6 {
		t.Fatalf("state has %d tensors, want 6: %v", len(good), good)
	}
	edit := func(f func(sd map[string]*tensor.Tensor)) map[string]*tensor.Tensor {
		sd := map[string]*tensor.Tensor{}
		for k, v := range good {
			sd[k] = v
		}
		f(sd)
		return sd
	}
	cases := map[string]struct {
		sd   map[string]*tensor.Tensor
		want string
	}{
		"wrong shape":   {edit(func(sd map[string]*tensor.Tensor) { sd["state.0.exp_avg"] = tensor.Zeros(3, 2) }), `"state.0.exp_avg" has shape [3 2]`},
		"missing":       {edit(func(sd map[string]*tensor.Tensor) { delete(sd, "state.1.exp_avg_sq") }), `"state.1.exp_avg_sq" is missing`},
		"bad step":      {edit(func(sd map[string]*tensor.Tensor) { sd["state.1.step"] = tensor.Scalar(1) }), `"state.1.step" must be one int64`},
		"extra":         {edit(func(sd map[string]*tensor.Tensor) { sd["state.2.exp_avg"] = tensor.Zeros(1) }), `unexpected tensors ["state.2.exp_avg"]`},
		"sgd state":     {map[string]*tensor.Tensor{"state.0.momentum_buffer": tensor.Zeros(2, 3)}, "unexpected tensors"},
		"wrong dtype":   {edit(func(sd map[string]*tensor.Tensor) { sd["state.1.exp_avg"] = tensor.FromInts([]int{1, 2, 3}) }), "dtype int64"},
		"negative step": {edit(func(sd map[string]*tensor.Tensor) { sd["state.0.step"] = tensor.FromInts([]int{-1}, 1).Reshape() }), "negative step"},
	}
	before := opt.StateDict()
	for name, c := range cases {
		err := opt.LoadStateDict(c.sd)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
	after := opt.StateDict()
	for k, v := range before {
		if !sameBits(bitsOf([]*tensor.Tensor{v}), bitsOf([]*tensor.Tensor{after[k]})) {
			t.Errorf("state %q changed by failed loads", k)
		}
	}
}

func TestClipGradNorm(t *testing.T) {
	p := tensor.Zeros(2).RequiresGrad()
	q := tensor.Zeros(1).RequiresGrad()
	r := tensor.Zeros(3).RequiresGrad() // no gradient: skipped
	p.SetGrad(tensor.New([]float32{3, 0}))
	q.SetGrad(tensor.New([]float32{4}))
	if n := optim.ClipGradNorm([]*tensor.Tensor{p, q, r}, 10); n != 5 {
		t.Errorf("norm = %v, want 5", n)
	}
	if g := p.Grad().Float32s(); g[0] != 3 {
		t.Errorf("gradient under the limit changed: %v", g)
	}
	if n := optim.ClipGradNorm([]*tensor.Tensor{p, q}, 1); n != 5 {
		t.Errorf("norm = %v, want 5", n)
	}
	if g := p.Grad().Float32s()[0]; !approx.Scalar(float64(g), 0.6, 0, 1e-6) {
		t.Errorf("clipped gradient %v, want 0.6", g)
	}
	if n := optim.ClipGradNorm([]*tensor.Tensor{r}, 1); n != 0 {
		t.Errorf("norm without gradients = %v, want 0", n)
	}
}

func TestDecayGroupsAndZeroGrad(t *testing.T) {
	tensor.ManualSeed(1)
	m := nn.NewGPT(nn.GPTConfig{VocabSize: 5, BlockSize: 4, NLayer: 1, NHead: 1, NEmbd: 4, Bias: true})
	gs := optim.DecayGroups(m.Parameters(), 0.1)
	if len(gs) != 2 || gs[0].WeightDecay != 0.1 || gs[1].WeightDecay != 0 {
		t.Fatalf("groups %+v", gs)
	}
	// nanoGPT: wte, wpe, c_attn, c_proj, c_fc, c_proj weights decay; the
	// biases and LayerNorm weights do not
	if len(gs[0].Params) != 6 || len(gs[1].Params) != 10 {
		t.Errorf("%d decayed and %d not, want 6 and 10", len(gs[0].Params), len(gs[1].Params))
	}
	opt := optim.NewAdamWGroups(gs, optim.AdamWConfig{LR: 1e-3})
	m.Loss(tensor.FromInts([]int{1, 2, 3}, 1, 3), tensor.FromInts([]int{2, 3, 4}, 1, 3)).Backward()
	opt.Step()
	opt.ZeroGrad()
	for _, p := range m.Parameters() {
		if p.Grad() != nil {
			t.Fatal("ZeroGrad left a gradient")
		}
	}
	if cfg := opt.Config(); cfg.Beta1 != 0.9 || cfg.Beta2 != 0.999 || cfg.Eps != 1e-8 {
		t.Errorf("defaults %+v", cfg)
	}
}

// TestNewOptimizerPanicsOnBadArguments checks that each kind of bad
// argument panics with a *tensor.Error that tensor.Catch returns, naming
// package optim, the optimizer and the offending value.
func TestNewOptimizerPanicsOnBadArguments(t *testing.T) {
	p := tensor.Zeros(2).RequiresGrad()
	for name, c := range map[string]struct {
		op   string
		want string
		f    func()
	}{
		"nesterov without momentum": {"SGD", "Nesterov momentum requires a momentum",
			func() { optim.NewSGD([]*tensor.Tensor{p}, optim.SGDConfig{LR: 0.1, Nesterov: true}) }},
		"negative momentum": {"SGD", "got -1 and 0",
			func() { optim.NewSGD([]*tensor.Tensor{p}, optim.SGDConfig{LR: 0.1, Momentum: -1}) }},
		"repeated parameter": {"AdamW", "a parameter of shape [2] appears twice",
			func() { optim.NewAdamW([]*tensor.Tensor{p, p}, optim.AdamWConfig{LR: 0.1}) }},
		"nil parameter": {"SGD", "nil parameter",
			func() { optim.NewSGD([]*tensor.Tensor{nil}, optim.SGDConfig{LR: 0.1}) }},
		"beta out of range": {"Adam", "betas must be in [0, 1), got (1, ",
			func() { optim.NewAdam([]*tensor.Tensor{p}, optim.AdamConfig{LR: 0.1, Beta1: 1}) }},
		"negative eps": {"AdamW", "got -1 and 0",
			func() { optim.NewAdamW([]*tensor.Tensor{p}, optim.AdamWConfig{LR: 0.1, Eps: -1}) }},
		"negative lr": {"AdamW", "invalid learning rate -1",
			func() { optim.NewAdamW([]*tensor.Tensor{p}, optim.AdamWConfig{LR: -1}) }},
		"int64 parameter": {"SGD", "must be float32, got int64 of shape [1]",
			func() { optim.NewSGD([]*tensor.Tensor{tensor.FromInts([]int{1})}, optim.SGDConfig{LR: 1}) }},
	} {
		err := tensor.Catch(c.f)
		var e *tensor.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: Catch returned %v (%T), want a *tensor.Error", name, err, err)
			continue
		}
		if want := "optim: " + c.op + ": "; e.Pkg != "optim" || e.Op != c.op || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q (Pkg %q, Op %q), want %q…%q", name, err, e.Pkg, e.Op, want, c.want)
		}
	}
}

func TestCosineLRShape(t *testing.T) {
	s := optim.CosineLR{MaxLR: 1, MinLR: 0.1, WarmupIters: 10, DecayIters: 110}
	if got := s.At(0); got != 1.0/11 {
		t.Errorf("At(0) = %v", got)
	}
	if got := s.At(10); got != 1 {
		t.Errorf("At(warmup) = %v, want the peak", got)
	}
	if got := s.At(60); !approx.Scalar(got, 0.55, 0, 1e-12) {
		t.Errorf("At(middle) = %v, want 0.55", got)
	}
	if got := s.At(1000); got != 0.1 {
		t.Errorf("At(after decay) = %v", got)
	}
	if got := (optim.CosineLR{MaxLR: 1, MinLR: 0.5, WarmupIters: 5, DecayIters: 5}).At(5); got != 0.5 {
		t.Errorf("degenerate schedule At(5) = %v, want MinLR", got)
	}
}
