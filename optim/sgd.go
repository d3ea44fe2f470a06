package optim

import (
	"fmt"
	"math"
	"slices"

	"github.com/wickml/wick/tensor"
)

// SGDConfig holds the hyperparameters of SGD, with PyTorch's names
// (dampening is 0).
type SGDConfig struct {
	LR          float64
	Momentum    float64
	Nesterov    bool
	WeightDecay float64
}

// SGD is stochastic gradient descent with optional momentum, Nesterov
// momentum and L2 weight decay, with torch.optim.SGD's update:
//
//	g ← g + wd·p
//	b ← g at the first step, then b ← μ·b + g
//	g ← g + μ·b (Nesterov) or g ← b
//	p ← p − lr·g
type SGD struct {
	groups
	cfg SGDConfig
	buf map[*tensor.Tensor]*tensor.Tensor // momentum buffers
}

var _ Optimizer = (*SGD)(nil)

// NewSGD returns an SGD optimizer over params. NewSGD panics if cfg.LR is
// negative or NaN, cfg.Momentum or cfg.WeightDecay is negative, Nesterov
// is set without momentum, or a parameter is nil, not Float32 or listed
// twice.
func NewSGD(params []*tensor.Tensor, cfg SGDConfig) *SGD {
	return NewSGDGroups([]ParamGroup{{Params: params, WeightDecay: cfg.WeightDecay}}, cfg)
}

// NewSGDGroups returns an SGD optimizer over parameter groups, each with its
// own weight decay; cfg.WeightDecay is not used. NewSGDGroups panics like
// NewSGD.
func NewSGDGroups(gs []ParamGroup, cfg SGDConfig) *SGD {
	if cfg.Momentum < 0 || cfg.WeightDecay < 0 {
		panic(&tensor.Error{Pkg: "optim", Op: "SGD", Msg: fmt.Sprintf("momentum and weight decay must not be negative, got %v and %v", cfg.Momentum, cfg.WeightDecay)})
	}
	if cfg.Nesterov && cfg.Momentum == 0 {
		panic(&tensor.Error{Pkg: "optim", Op: "SGD", Msg: "Nesterov momentum requires a momentum"})
	}
	return &SGD{groups: newGroups("SGD", gs, cfg.LR), cfg: cfg, buf: map[*tensor.Tensor]*tensor.Tensor{}}
}

// Step updates every parameter that has a gradient. On the CPU the
// arithmetic uses the fused multiply-adds of PyTorch's CPU kernels (add
// with alpha), so results agree with torch.optim.SGD to the last bit or
// so; on a GPU it runs as tensor operations on the device.
func (o *SGD) Step() {
	mu := float32(o.cfg.Momentum)
	alpha := float32(-o.lr)
	o.each(func(_ int, p *tensor.Tensor, grp *ParamGroup) {
		g := p.Grad()
		if g == nil {
			return
		}
		if p.Device() != tensor.CPU {
			o.stepOnDevice(p, g, float32(grp.WeightDecay), mu, alpha)
			return
		}
		pd, d := p.Float32s(), g.Float32s()
		if wd := float32(grp.WeightDecay); wd != 0 {
			for i := range d {
				d[i] = fma32(pd[i], wd, d[i]) // d.add(p, alpha=wd)
			}
		}
		if o.cfg.Momentum != 0 {
			b := o.buf[p]
			if b == nil {
				b = tensor.New(slices.Clone(d), p.Shape()...).To(p.Device())
				o.buf[p] = b
			} else {
				bd := b.Float32s()
				for i := range bd {
					bd[i] = float32(bd[i]*mu) + d[i] // b.mul_(μ).add_(d)
				}
				b.CopyFrom(tensor.New(bd, p.Shape()...))
			}
			if o.cfg.Nesterov {
				bd := b.Float32s()
				for i := range d {
					d[i] = fma32(bd[i], mu, d[i]) // d.add(b, alpha=μ)
				}
			} else {
				d = b.Float32s()
			}
		}
		for i := range pd {
			pd[i] = fma32(d[i], alpha, pd[i]) // p.add_(d, alpha=-lr)
		}
		p.Detach().CopyFrom(tensor.New(pd, p.Shape()...)) // a view that does not require grad: allowed in place
	})
}

// stepOnDevice is Step's update of p with gradient g as tensor operations,
// which run where p lives.
func (o *SGD) stepOnDevice(p, g *tensor.Tensor, wd, mu, alpha float32) {
	pd := p.Detach() // the update is not recorded
	d := g
	if wd != 0 {
		d = d.Add(pd.MulScalar(wd)) // d.add(p, alpha=wd)
	}
	if o.cfg.Momentum != 0 {
		b := o.buf[p]
		if b == nil {
			b = d.Clone()
			o.buf[p] = b
		} else {
			b.CopyFrom(b.MulScalar(mu).Add(d)) // b.mul_(μ).add_(d)
		}
		if o.cfg.Nesterov {
			d = d.Add(b.MulScalar(mu)) // d.add(b, alpha=μ)
		} else {
			d = b
		}
	}
	pd.CopyFrom(pd.Add(d.MulScalar(alpha))) // p.add_(d, alpha=-lr)
}

// fma32 returns a·b + c rounded once, like the fused multiply-add of
// PyTorch's vectorised CPU kernels.
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// StateDict returns copies of the momentum buffers, "state.i.momentum_buffer"
// for the i-th parameter (counting across groups) that has one.
func (o *SGD) StateDict() map[string]*tensor.Tensor {
	sd := map[string]*tensor.Tensor{}
	o.each(func(i int, p *tensor.Tensor, _ *ParamGroup) {
		if b := o.buf[p]; b != nil {
			sd[stateKey(i, "momentum_buffer")] = copyOf(b)
		}
	})
	return sd
}

// LoadStateDict restores the momentum buffers from StateDict.
func (o *SGD) LoadStateDict(sd map[string]*tensor.Tensor) error {
	known := map[string]bool{}
	buf := map[*tensor.Tensor]*tensor.Tensor{}
	var err error
	o.each(func(i int, p *tensor.Tensor, _ *ParamGroup) {
		k := stateKey(i, "momentum_buffer")
		if _, ok := sd[k]; !ok || err != nil {
			return
		}
		known[k] = true
		if err = checkStateTensor("SGD", sd, k, p); err != nil {
			return
		}
		b := tensor.ZerosLike(p)
		b.CopyFrom(sd[k])
		buf[p] = b
	})
	if err != nil {
		return err
	}
	if err := checkKnownKeys("SGD", sd, known); err != nil {
		return err
	}
	o.buf = buf
	return nil
}
