package tensor

import (
	"math/rand/v2"

	"github.com/wickml/wick/autograd"
)

// rngKey is the autograd.Local key of the calling goroutine's rngLog.
type rngKey struct{}

// rngLog makes the random numbers of a Checkpoint's recomputation equal
// those of its forward pass, for this goroutine only. While recording (the
// forward pass) it keeps the state of each generator before its first
// draw; while replaying (the backward pass) draws from those generators
// come from private copies of the kept states, so the generators
// themselves, which other goroutines may share, do not move.
type rngLog struct {
	parent *rngLog
	replay bool
	first  map[*Generator][]byte    // recording: state before the first draw
	copies map[*Generator]*genState // replaying: the private states
}

// lock returns the locked state that a draw from g should use.
func (l *rngLog) lock(g *Generator, real *genState) *genState {
	s := real
	var recorders []*rngLog
	for x := l; x != nil; x = x.parent {
		if !x.replay {
			recorders = append(recorders, x)
			continue
		}
		if c, ok := x.copies[g]; ok {
			s = c
			break
		}
	}
	s.mu.Lock()
	for _, r := range recorders {
		if _, ok := r.first[g]; !ok {
			b, _ := s.pcg.MarshalBinary() // never fails
			r.first[g] = b
		}
	}
	return s
}

// Checkpoint returns f(inputs) without keeping f's intermediate tensors for
// the backward pass, like torch.utils.checkpoint.checkpoint: f runs without
// recording, and when the backward pass reaches the result it runs f again
// with recording on and backpropagates through that. Activation memory
// falls to the inputs and the output of f; the price is a second forward
// pass of f.
//
// The second pass runs in the first's autocast precision (Autocast), and
// the random numbers f draws the second time are those it drew the first
// time (dropout masks included), from every generator it uses, so the
// gradients are bit for bit those of f called directly, given
// deterministic kernels. The replay is private to the calling goroutine:
// the generators do not move back, and other goroutines drawing from them
// meanwhile are unaffected (they do change what f would have drawn the
// first time, as always with shared generators).
//
// f must be a function of its inputs and of tensors it reaches otherwise
// (parameters), and must compute the same thing both times. Gradients
// reach the inputs that require them and, through the second pass, every
// leaf f uses; the result is recorded only when an input requires a
// gradient, so pass the parameters that should learn among the inputs
// when no other input requires one (f may ignore them). Without recording
// (inside autograd.NoGrad, or no input requiring a gradient) Checkpoint is
// f(inputs). It panics if f returns nil.
func Checkpoint(f func(inputs []*Tensor) *Tensor, inputs ...*Tensor) *Tensor {
	need := false
	for _, in := range inputs {
		if in != nil && in.requiresGrad {
			need = true
		}
	}
	if !need || !autograd.Enabled() {
		out := f(inputs)
		if out == nil {
			panicf("Checkpoint", "f returned nil")
		}
		return out
	}
	fn := &Function{
		Name: "Checkpoint",
		Forward: func(ctx *FunctionContext, views []*Tensor) []*Tensor {
			parent, _ := autograd.Local(rngKey{}).(*rngLog)
			log := &rngLog{parent: parent, first: map[*Generator][]byte{}}
			var out *Tensor
			autograd.WithLocal(rngKey{}, log, func() { out = f(views) })
			if out == nil {
				panicf("Checkpoint", "f returned nil")
			}
			ctx.Set("rng", log.first)
			dt, _ := AutocastDType() // the second pass computes in the first's precision
			ctx.Set("autocast", dt)
			return []*Tensor{out}
		},
		Backward: func(ctx *FunctionContext, grads []*Tensor) []*Tensor {
			first := ctx.Get("rng").(map[*Generator][]byte)
			parent, _ := autograd.Local(rngKey{}).(*rngLog)
			log := &rngLog{parent: parent, replay: true, copies: map[*Generator]*genState{}}
			for g, b := range first {
				var p rand.PCG
				_ = p.UnmarshalBinary(b) // written by MarshalBinary
				log.copies[g] = &genState{pcg: &p, r: rand.New(&p)}
			}
			views := make([]*Tensor, len(inputs))
			for i, in := range inputs {
				if in == nil {
					continue
				}
				views[i] = in.Detach()
				if ctx.NeedsInputGrad(i) {
					views[i].RequiresGrad()
				}
			}
			autograd.WithLocal(rngKey{}, log, func() {
				autograd.EnableGrad(func() {
					var out *Tensor
					Autocast(ctx.Get("autocast").(DType), func() { out = f(views) })
					if out != nil && out.requiresGrad {
						out.BackwardWith(grads[0])
					}
				})
			})
			gin := make([]*Tensor, len(inputs))
			for i, v := range views {
				if v != nil && ctx.NeedsInputGrad(i) {
					gin[i] = v.Grad()
				}
			}
			return gin
		},
	}
	return fn.Apply(inputs...)
}
