package nn

import (
	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// Checkpointed wraps a Layer so that its activations are not kept for the
// backward pass but recomputed there (activation checkpointing, with
// tensor.Checkpoint): the layer's output and gradients are bit for bit
// those of the layer itself, dropout included, for a fraction of the
// activation memory and one more forward pass of the layer. Its Module
// methods are the layer's, so parameter names do not change.
type Checkpointed struct {
	Layer
}

// Forward returns the layer's output for x, recomputing the layer's
// intermediates in the backward pass.
func (c Checkpointed) Forward(x *tensor.Tensor) *tensor.Tensor {
	return tensor.Checkpoint(func(in []*tensor.Tensor) *tensor.Tensor {
		return recomputedRegion(func() *tensor.Tensor { return c.Layer.Forward(in[0]) })
	}, append([]*tensor.Tensor{x}, trainables(c.Layer)...)...)
}

// recomputedKey marks, for the calling goroutine (autograd.WithLocal), a
// region that tensor.Checkpoint recomputes whole: Checkpointed and the
// checkpointed Llama layers. A frozen GatedMLP inside one keeps its gate
// and up products (one layer's worth at a time, while the region is
// recomputed) rather than compute them a third time.
type recomputedKey struct{}

// recomputedRegion returns f() with the calling goroutine marked as inside
// a recomputed region.
func recomputedRegion(f func() *tensor.Tensor) *tensor.Tensor {
	var out *tensor.Tensor
	autograd.WithLocal(recomputedKey{}, true, func() { out = f() })
	return out
}

// inRecomputedRegion reports whether the calling goroutine runs inside
// recomputedRegion.
func inRecomputedRegion() bool { return autograd.Local(recomputedKey{}) != nil }

// trainables returns the tensors of m that require a gradient: its
// parameters and those of LoRA adapters on its Linear layers. They go to
// tensor.Checkpoint as inputs, so that the recomputation runs even when the
// layer's input needs no gradient (a frozen model with adapters).
func trainables(m Module) []*tensor.Tensor {
	var out []*tensor.Tensor
	for _, p := range m.Parameters() {
		if p.IsRequiringGrad() {
			out = append(out, p)
		}
	}
	for _, nm := range NamedModules(m) {
		if lin, ok := nm.Module.(*Linear); ok && lin.lora != nil && !lin.lora.merged {
			for _, p := range []*tensor.Tensor{lin.lora.a, lin.lora.b} {
				if p.IsRequiringGrad() {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// checkpointed is forward without a cache, its intermediates recomputed in
// the backward pass (tensor.Checkpoint); the rotary tables go along as
// inputs that need no gradient.
func (l *LlamaDecoderLayer) checkpointed(x, cos, sin *tensor.Tensor) *tensor.Tensor {
	return tensor.Checkpoint(func(in []*tensor.Tensor) *tensor.Tensor {
		return recomputedRegion(func() *tensor.Tensor { return l.forward(in[0], in[1], in[2], nil, nil, 0) })
	}, append([]*tensor.Tensor{x, cos, sin}, trainables(l)...)...)
}
