package optim

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// AdamWConfig holds the hyperparameters of Adam and AdamW, with PyTorch's
// names. WeightDecay is, for AdamW, the decoupled decay and, for Adam, the
// L2 penalty added to the gradient; with parameter groups, each group's
// WeightDecay replaces it.
//
// Start from DefaultAdamW (or DefaultAdam) to get PyTorch's defaults and
// to have every field used exactly as it reads, zeros included:
//
//	cfg := optim.DefaultAdamW() // lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0.01
//	cfg.Beta1 = 0               // β1 = 0, as torch.optim.AdamW(betas=(0, 0.999))
//	opt := optim.NewAdamW(params, cfg)
//
// A config written as a literal instead (AdamWConfig{LR: 3e-4}) keeps the
// older zero-value rule, so that a missing field is not a degenerate
// value: a zero Beta1, Beta2 or Eps means PyTorch's default (0.9, 0.999,
// 1e-8), and WeightDecay is used as given, so a missing WeightDecay means
// no decay (not AdamW's 0.01). In such a literal β = 0 and eps = 0 cannot
// be written; use DefaultAdamW for them. The Config method of an
// optimizer returns a config of the first kind, holding the values in use.
type AdamWConfig struct {
	LR          float64
	Beta1       float64
	Beta2       float64
	Eps         float64
	WeightDecay float64

	exact bool // from DefaultAdamW, DefaultAdam or Config: zeros are zeros
}

// AdamConfig is the configuration of Adam; see AdamWConfig.
type AdamConfig = AdamWConfig

// DefaultAdamW returns torch.optim.AdamW's defaults: lr 1e-3, betas (0.9,
// 0.999), eps 1e-8, weight_decay 0.01. Every field of the result is used
// as it reads, zeros included (see AdamWConfig).
func DefaultAdamW() AdamWConfig {
	return AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, exact: true}
}

// DefaultAdam returns torch.optim.Adam's defaults: lr 1e-3, betas (0.9,
// 0.999), eps 1e-8, weight_decay 0. Every field of the result is used as
// it reads, zeros included (see AdamWConfig).
func DefaultAdam() AdamConfig {
	return AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, exact: true}
}

// withDefaults applies the zero-value rule of literal configs and marks
// the result exact.
func (c AdamWConfig) withDefaults() AdamWConfig {
	if !c.exact {
		if c.Beta1 == 0 {
			c.Beta1 = 0.9
		}
		if c.Beta2 == 0 {
			c.Beta2 = 0.999
		}
		if c.Eps == 0 {
			c.Eps = 1e-8
		}
	}
	c.exact = true
	return c
}

func (c AdamWConfig) check(name string) {
	if c.Beta1 < 0 || c.Beta1 >= 1 || c.Beta2 < 0 || c.Beta2 >= 1 {
		panic(&tensor.Error{Pkg: "optim", Op: name, Msg: fmt.Sprintf("betas must be in [0, 1), got (%v, %v)", c.Beta1, c.Beta2)})
	}
	if c.Eps < 0 || c.WeightDecay < 0 {
		panic(&tensor.Error{Pkg: "optim", Op: name, Msg: fmt.Sprintf("eps and weight decay must not be negative, got %v and %v", c.Eps, c.WeightDecay)})
	}
}

type adamState struct {
	step int
	m, v *tensor.Tensor // exp_avg, exp_avg_sq
}

// AdamW is the Adam optimizer with decoupled weight decay
// (torch.optim.AdamW), with PyTorch 1.13's single-tensor update: for each
// parameter with a gradient g, at step t,
//
//	p ← p·(1 − lr·wd)
//	m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
//	p ← p − lr/(1−β1^t) · m / (√v/√(1−β2^t) + eps)
//
// The update runs as one fused kernel of the parameter's device.
type AdamW struct {
	groups
	cfg   AdamWConfig
	decay bool // decoupled (AdamW) rather than L2 (Adam)
	state map[*tensor.Tensor]*adamState
}

var _ Optimizer = (*AdamW)(nil)

// NewAdamW returns an AdamW optimizer over params, all with cfg's weight
// decay. NewAdamW panics if cfg.LR is negative or NaN, a beta is outside
// [0, 1), cfg.Eps or cfg.WeightDecay is negative, or a parameter is nil, not
// Float32 or listed twice.
func NewAdamW(params []*tensor.Tensor, cfg AdamWConfig) *AdamW {
	return NewAdamWGroups([]ParamGroup{{Params: params, WeightDecay: cfg.WeightDecay}}, cfg)
}

// NewAdamWGroups returns an AdamW optimizer over parameter groups, each
// with its own weight decay (see DecayGroups); cfg.WeightDecay is not used.
// NewAdamWGroups panics like NewAdamW.
func NewAdamWGroups(gs []ParamGroup, cfg AdamWConfig) *AdamW {
	cfg = cfg.withDefaults()
	cfg.check("AdamW")
	return &AdamW{groups: newGroups("AdamW", gs, cfg.LR), cfg: cfg, decay: true, state: map[*tensor.Tensor]*adamState{}}
}

// Adam is torch.optim.Adam: AdamW's update with the weight decay added to
// the gradient (g ← g + wd·p) instead of decoupled.
type Adam struct{ AdamW }

// NewAdam returns an Adam optimizer over params with cfg's weight decay.
// NewAdam panics like NewAdamW.
func NewAdam(params []*tensor.Tensor, cfg AdamConfig) *Adam {
	return NewAdamGroups([]ParamGroup{{Params: params, WeightDecay: cfg.WeightDecay}}, cfg)
}

// NewAdamGroups returns an Adam optimizer over parameter groups, each with
// its own weight decay; cfg.WeightDecay is not used. NewAdamGroups panics
// like NewAdamW.
func NewAdamGroups(gs []ParamGroup, cfg AdamConfig) *Adam {
	cfg = cfg.withDefaults()
	cfg.check("Adam")
	return &Adam{AdamW{groups: newGroups("Adam", gs, cfg.LR), cfg: cfg, state: map[*tensor.Tensor]*adamState{}}}
}

// Config returns the hyperparameters in use (LR is the current learning
// rate), as a config whose fields are used as they read: passing it to
// NewAdamW builds an optimizer with the same hyperparameters.
func (o *AdamW) Config() AdamWConfig {
	c := o.cfg
	c.LR = o.lr
	return c
}

// Step updates every parameter that has a gradient.
func (o *AdamW) Step() {
	o.each(func(_ int, p *tensor.Tensor, grp *ParamGroup) {
		g := p.Grad()
		if g == nil {
			return
		}
		st := o.state[p]
		if st == nil {
			st = &adamState{m: tensor.ZerosLike(p), v: tensor.ZerosLike(p)}
			o.state[p] = st
		}
		st.step++
		c := tensor.AdamWStep{LR: o.lr, Beta1: o.cfg.Beta1, Beta2: o.cfg.Beta2, Eps: o.cfg.Eps, Step: st.step}
		if o.decay {
			c.WeightDecay = grp.WeightDecay
		} else if grp.WeightDecay != 0 {
			g = g.Add(p.Detach().MulScalar(float32(grp.WeightDecay)))
		}
		// through a view that does not require grad: the in-place update
		// is allowed whatever the caller's grad mode
		tensor.AdamWUpdate(p.Detach(), g, st.m, st.v, c)
	})
}

// StateDict returns copies of the state: for the i-th parameter (counting
// across groups) that has taken a step, "state.i.step" (an Int64 scalar),
// "state.i.exp_avg" and "state.i.exp_avg_sq".
func (o *AdamW) StateDict() map[string]*tensor.Tensor {
	sd := map[string]*tensor.Tensor{}
	o.each(func(i int, p *tensor.Tensor, _ *ParamGroup) {
		if st := o.state[p]; st != nil {
			sd[stateKey(i, "step")] = tensor.FromInts([]int{st.step}, 1).Reshape()
			sd[stateKey(i, "exp_avg")] = copyOf(st.m)
			sd[stateKey(i, "exp_avg_sq")] = copyOf(st.v)
		}
	})
	return sd
}

// LoadStateDict restores state from StateDict. Parameters without entries
// start fresh, as they would in the saved optimizer.
func (o *AdamW) LoadStateDict(sd map[string]*tensor.Tensor) error {
	name := o.name
	known := map[string]bool{}
	state := map[*tensor.Tensor]*adamState{}
	var err error
	o.each(func(i int, p *tensor.Tensor, _ *ParamGroup) {
		if err != nil {
			return
		}
		kStep, kM, kV := stateKey(i, "step"), stateKey(i, "exp_avg"), stateKey(i, "exp_avg_sq")
		_, hasStep := sd[kStep]
		_, hasM := sd[kM]
		_, hasV := sd[kV]
		if !hasStep && !hasM && !hasV {
			return
		}
		known[kStep], known[kM], known[kV] = true, true, true
		var step int
		if step, err = stepOf(name, sd, kStep); err != nil {
			return
		}
		if err = checkStateTensor(name, sd, kM, p); err != nil {
			return
		}
		if err = checkStateTensor(name, sd, kV, p); err != nil {
			return
		}
		st := &adamState{step: step, m: tensor.ZerosLike(p), v: tensor.ZerosLike(p)}
		st.m.CopyFrom(sd[kM])
		st.v.CopyFrom(sd[kV])
		state[p] = st
	})
	if err != nil {
		return err
	}
	if err := checkKnownKeys(name, sd, known); err != nil {
		return err
	}
	o.state = state
	return nil
}
