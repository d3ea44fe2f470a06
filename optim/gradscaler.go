package optim

import (
	"fmt"
	"math"

	"github.com/wickml/wick/tensor"
)

// GradScalerConfig holds a GradScaler's settings; zero fields take
// torch.cuda.amp.GradScaler's defaults.
type GradScalerConfig struct {
	InitScale      float32 // the first scale (default 2¹⁶ = 65536)
	GrowthFactor   float32 // the scale's factor after GrowthInterval steps without overflow (default 2)
	BackoffFactor  float32 // the scale's factor after an overflow (default 0.5)
	GrowthInterval int     // steps without overflow before the scale grows (default 2000)
}

// GradScaler is dynamic loss scaling for float16 training, with
// torch.cuda.amp.GradScaler's rules: the loss is multiplied by the scale
// before Backward (ScaleLoss), so that small gradients survive float16;
// Unscale divides the gradients by it again (before gradient clipping)
// and looks for infinities and NaNs; Step skips the optimizer step when
// it found any; Update halves the scale (BackoffFactor) after such a step
// and doubles it (GrowthFactor) after GrowthInterval steps in a row
// without one, keeping it when the product would overflow float32. The
// use, as in PyTorch:
//
//	s.ScaleLoss(loss).Backward()
//	s.Unscale(params)              // optional: for clipping
//	optim.ClipGradNorm(params, 1)
//	s.Step(opt, params)            // skipped on inf/NaN gradients
//	s.Update()
//	opt.ZeroGrad()
//
// A GradScaler is not safe for concurrent use.
type GradScaler struct {
	cfg      GradScalerConfig
	scale    float32
	tracker  int  // steps without overflow since the scale last changed (PyTorch's _growth_tracker)
	unscaled bool // Unscale ran since the last Update
	stepped  bool // Step ran since the last Update
	foundInf bool // Unscale found an inf or NaN
}

// NewGradScaler returns a GradScaler with cfg's settings (PyTorch's
// defaults for zero fields). It panics with a *tensor.Error if a setting
// is out of range (a scale that is not positive and finite, a growth
// factor ≤ 1, a backoff factor outside (0, 1), a negative interval).
func NewGradScaler(cfg GradScalerConfig) *GradScaler {
	if cfg.InitScale == 0 {
		cfg.InitScale = 65536
	}
	if cfg.GrowthFactor == 0 {
		cfg.GrowthFactor = 2
	}
	if cfg.BackoffFactor == 0 {
		cfg.BackoffFactor = 0.5
	}
	if cfg.GrowthInterval == 0 {
		cfg.GrowthInterval = 2000
	}
	inf := float32(math.Inf(1))
	if !(cfg.InitScale > 0 && cfg.InitScale < inf) || !(cfg.GrowthFactor > 1) || !(cfg.BackoffFactor > 0 && cfg.BackoffFactor < 1) || cfg.GrowthInterval < 0 {
		panic(&tensor.Error{Pkg: "optim", Op: "GradScaler", Msg: fmt.Sprintf("want a positive finite init scale, growth factor > 1, backoff factor in (0, 1) and growth interval > 0, got %v, %v, %v and %d",
			cfg.InitScale, cfg.GrowthFactor, cfg.BackoffFactor, cfg.GrowthInterval)})
	}
	return &GradScaler{cfg: cfg, scale: cfg.InitScale}
}

// Scale returns the current scale (PyTorch's get_scale).
func (s *GradScaler) Scale() float32 { return s.scale }

// GrowthTracker returns the number of steps without overflow since the
// scale last changed.
func (s *GradScaler) GrowthTracker() int { return s.tracker }

// SetState restores a scale and growth tracker saved with a checkpoint
// (PyTorch's load_state_dict).
func (s *GradScaler) SetState(scale float32, growthTracker int) {
	s.scale, s.tracker = scale, growthTracker
}

// ScaleLoss returns loss multiplied by the scale, for Backward.
func (s *GradScaler) ScaleLoss(loss *tensor.Tensor) *tensor.Tensor { return loss.MulScalar(s.scale) }

// Unscale multiplies the gradients of params by the reciprocal of the
// scale (rounded to float32 from float64, as PyTorch does; not at all
// when it is 1) and reports whether any element was an infinity or NaN
// before (on a GPU without copying the gradients to the host: one
// reduction there per gradient and one scalar read). Call it after the
// backward passes of a step and before clipping; Step calls it when it
// has not run. It panics with a *tensor.Error when called twice, or
// after Step, before Update.
func (s *GradScaler) Unscale(params []*tensor.Tensor) (foundInf bool) {
	switch {
	case s.unscaled:
		panic(&tensor.Error{Pkg: "optim", Op: "GradScaler.Unscale", Msg: "Unscale has already been called since the last Update"})
	case s.stepped:
		panic(&tensor.Error{Pkg: "optim", Op: "GradScaler.Unscale", Msg: "Unscale is being called after Step; call Update first"})
	}
	inv := float32(1 / float64(s.scale))
	// off the CPU the gradients stay where they are: probe sums g·0 over
	// them there, 0 unless an element is an inf or NaN (whose product
	// with 0 is NaN), and only that scalar comes to the host
	var probe *tensor.Tensor
	for _, p := range params {
		g := p.Grad()
		if g == nil {
			continue
		}
		if g.Device() != tensor.CPU {
			z := g.Detach().MulScalar(0)
			sum := z.Sum()
			z.Release()
			if probe == nil {
				probe = sum
			} else {
				probe = probe.Add(sum)
			}
		} else if !s.foundInf {
			for _, v := range g.Float32s() {
				if math.IsInf(float64(v), 0) || v != v {
					s.foundInf = true
					break
				}
			}
		}
		if inv != 1 {
			d := g.Detach()
			scaled := d.MulScalar(inv)
			d.CopyFrom(scaled)
			scaled.Release()
		}
	}
	if probe != nil && probe.Item() != 0 {
		s.foundInf = true
	}
	s.unscaled = true
	return s.foundInf
}

// Step unscales the gradients (unless Unscale already did) and takes the
// optimizer's step unless they held an infinity or NaN; it reports
// whether it stepped. It panics with a *tensor.Error when called twice
// before Update.
func (s *GradScaler) Step(opt Optimizer, params []*tensor.Tensor) bool {
	if s.stepped {
		panic(&tensor.Error{Pkg: "optim", Op: "GradScaler.Step", Msg: "Step has already been called since the last Update"})
	}
	if !s.unscaled {
		s.Unscale(params)
	}
	s.stepped = true
	if s.foundInf {
		return false
	}
	opt.Step()
	return true
}

// Update sets the scale for the next step by PyTorch's rule
// (_amp_update_scale_): after an overflow, scale·BackoffFactor and the
// tracker back to 0; else the tracker counts the step, and when it
// reaches GrowthInterval the scale becomes scale·GrowthFactor (unless
// that overflows float32) and the tracker 0. It panics with a
// *tensor.Error when no Unscale or Step ran since the last Update.
func (s *GradScaler) Update() {
	if !s.unscaled {
		panic(&tensor.Error{Pkg: "optim", Op: "GradScaler.Update", Msg: "no inf checks were recorded before Update: call Unscale or Step first"})
	}
	if s.foundInf {
		s.scale *= s.cfg.BackoffFactor
		s.tracker = 0
	} else if s.tracker+1 == s.cfg.GrowthInterval {
		if grown := s.scale * s.cfg.GrowthFactor; !math.IsInf(float64(grown), 0) && grown == grown {
			s.scale = grown
		}
		s.tracker = 0
	} else {
		s.tracker++
	}
	s.unscaled, s.stepped, s.foundInf = false, false, false
}
