package optim

import (
	"fmt"
	"math"
	"slices"

	"github.com/wickml/wick/tensor"
)

// Optimizer updates parameters from their gradients. SGD, Adam and AdamW
// implement it.
type Optimizer interface {
	// Step updates every parameter that has a gradient.
	Step()
	// ZeroGrad clears the gradients of all parameters (PyTorch's
	// zero_grad(set_to_none=True)).
	ZeroGrad()
	// SetLR sets the learning rate of every group.
	SetLR(lr float64)
	// LR returns the current learning rate.
	LR() float64
	// StateDict returns copies of the optimizer's state (moment
	// estimates, momentum buffers, step counts) by name, for checkpoints.
	StateDict() map[string]*tensor.Tensor
	// LoadStateDict restores state returned by StateDict of an optimizer
	// of the same kind over parameters of the same shapes, so that the
	// following steps are exactly those the saved optimizer would have
	// taken. On error the optimizer is unchanged.
	LoadStateDict(sd map[string]*tensor.Tensor) error
}

// ParamGroup is a set of parameters that share a weight decay, like a
// PyTorch param group.
type ParamGroup struct {
	Params      []*tensor.Tensor
	WeightDecay float64
}

// DecayGroups splits params like nanoGPT's configure_optimizers: tensors
// with two or more dimensions (matmul weights and embeddings) get
// weightDecay, the others (biases, LayerNorm weights) none. The first
// group holds the decayed tensors.
func DecayGroups(params []*tensor.Tensor, weightDecay float64) []ParamGroup {
	decay := ParamGroup{WeightDecay: weightDecay}
	noDecay := ParamGroup{}
	for _, p := range params {
		if p.Dim() >= 2 {
			decay.Params = append(decay.Params, p)
		} else {
			noDecay.Params = append(noDecay.Params, p)
		}
	}
	return []ParamGroup{decay, noDecay}
}

// groups holds what every optimizer shares: its parameter groups and lr.
type groups struct {
	name   string
	groups []ParamGroup
	lr     float64
}

func newGroups(name string, gs []ParamGroup, lr float64) groups {
	seen := map[*tensor.Tensor]bool{}
	for _, g := range gs {
		for _, p := range g.Params {
			if p == nil {
				panic(&tensor.Error{Pkg: "optim", Op: name, Msg: "nil parameter"})
			}
			if p.DType() != tensor.Float32 {
				panic(&tensor.Error{Pkg: "optim", Op: name, Msg: fmt.Sprintf("parameters must be float32, got %s of shape %v", p.DType(), p.Shape())})
			}
			if seen[p] {
				panic(&tensor.Error{Pkg: "optim", Op: name, Msg: fmt.Sprintf("a parameter of shape %v appears twice", p.Shape())})
			}
			seen[p] = true
		}
	}
	if lr < 0 || math.IsNaN(lr) {
		panic(&tensor.Error{Pkg: "optim", Op: name, Msg: fmt.Sprintf("invalid learning rate %v", lr)})
	}
	return groups{name: name, groups: slices.Clone(gs), lr: lr}
}

// each calls f for every parameter with its index across groups (PyTorch's
// state numbering) and its group.
func (g *groups) each(f func(i int, p *tensor.Tensor, grp *ParamGroup)) {
	i := 0
	for gi := range g.groups {
		for _, p := range g.groups[gi].Params {
			f(i, p, &g.groups[gi])
			i++
		}
	}
}

func (g *groups) count() int {
	n := 0
	for _, grp := range g.groups {
		n += len(grp.Params)
	}
	return n
}

// ZeroGrad clears the gradients of all parameters.
func (g *groups) ZeroGrad() {
	g.each(func(_ int, p *tensor.Tensor, _ *ParamGroup) { p.ZeroGrad() })
}

// SetLR sets the learning rate used by the next Step.
func (g *groups) SetLR(lr float64) { g.lr = lr }

// LR returns the learning rate used by the next Step.
func (g *groups) LR() float64 { return g.lr }

// Params returns all parameters in group order.
func (g *groups) Params() []*tensor.Tensor {
	var out []*tensor.Tensor
	g.each(func(_ int, p *tensor.Tensor, _ *ParamGroup) { out = append(out, p) })
	return out
}

// ClipGradNorm scales the gradients of params so that their joint L2 norm
// is at most maxNorm, like torch.nn.utils.clip_grad_norm_: every gradient
// is multiplied by min(1, maxNorm/(norm+1e-6)). It returns the norm before
// clipping (0 if no parameter has a gradient). Parameters without a
// gradient are skipped.
func ClipGradNorm(params []*tensor.Tensor, maxNorm float32) float32 {
	var grads []*tensor.Tensor
	for _, p := range params {
		if g := p.Grad(); g != nil {
			grads = append(grads, g.Detach()) // a view that is never recorded
		}
	}
	if len(grads) == 0 {
		return 0
	}
	// one pass over all gradients (one kernel on a GPU), squares summed in
	// float64
	total := tensor.GlobalNorm(grads).Item()
	coef := maxNorm / (total + 1e-6)
	if coef >= 1 {
		// PyTorch multiplies by the clamped coefficient, 1: a no-op
		// (x·1 = x for every float32), so skipped
		return total
	}
	for _, g := range grads {
		scaled := g.MulScalar(coef)
		g.CopyFrom(scaled)
		scaled.Release() // seen by no one else: its memory serves the next gradient
	}
	return total
}

// stateKey names a per-parameter state tensor like PyTorch's
// optimizer.state_dict()["state"][i][field].
func stateKey(i int, field string) string { return fmt.Sprintf("state.%d.%s", i, field) }

// checkStateTensor validates one tensor of a state dict against the
// parameter it belongs to.
func checkStateTensor(opt string, sd map[string]*tensor.Tensor, key string, p *tensor.Tensor) error {
	t, ok := sd[key]
	switch {
	case !ok:
		return fmt.Errorf("optim: %s: load state: tensor %q is missing", opt, key)
	case t.DType() != tensor.Float32:
		return fmt.Errorf("optim: %s: load state: tensor %q has dtype %s, want float32", opt, key, t.DType())
	case !slices.Equal(t.Shape(), p.Shape()):
		return fmt.Errorf("optim: %s: load state: tensor %q has shape %v, its parameter has %v", opt, key, t.Shape(), p.Shape())
	}
	return nil
}

// stepOf reads a step counter (an Int64 scalar).
func stepOf(opt string, sd map[string]*tensor.Tensor, key string) (int, error) {
	t, ok := sd[key]
	if !ok {
		return 0, fmt.Errorf("optim: %s: load state: tensor %q is missing", opt, key)
	}
	if t.DType() != tensor.Int64 || t.Numel() != 1 {
		return 0, fmt.Errorf("optim: %s: load state: tensor %q must be one int64, got %s of shape %v", opt, key, t.DType(), t.Shape())
	}
	s := t.Ints()[0]
	if s < 0 {
		return 0, fmt.Errorf("optim: %s: load state: tensor %q holds a negative step %d", opt, key, s)
	}
	return s, nil
}

// checkKnownKeys reports names of sd that are not in known.
func checkKnownKeys(opt string, sd map[string]*tensor.Tensor, known map[string]bool) error {
	var extra []string
	for k := range sd {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fmt.Errorf("optim: %s: load state: unexpected tensors %q (state of a different optimizer or model?)", opt, extra)
	}
	return nil
}

func copyOf(t *tensor.Tensor) *tensor.Tensor {
	return t.Detach().Clone()
}
