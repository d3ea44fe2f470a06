package tensor

import "testing"

// BenchmarkFusedLlama times each fused Llama-family op against its
// composition, forward and backward, at SmolLM2-135M's shapes with a
// batch of 4×256 tokens.
func BenchmarkFusedLlama(b *testing.B) {
	NoPoison(b)
	ManualSeed(1)
	cos, sin := Randn(256, 64), Randn(256, 64)
	cases := []struct {
		name     string
		ins      []*Tensor
		fused    func([]*Tensor) *Tensor
		composed func([]*Tensor) *Tensor
	}{
		{"RMSNorm", []*Tensor{Randn(4, 256, 576), Randn(576)},
			func(in []*Tensor) *Tensor { return in[0].RMSNorm(in[1], 1e-5) },
			func(in []*Tensor) *Tensor { return rmsNormComposed(in[0], in[1], 1e-5) }},
		{"SwiGLU", []*Tensor{Randn(4, 256, 1536), Randn(4, 256, 1536)},
			func(in []*Tensor) *Tensor { return SwiGLU(in[0], in[1]) },
			func(in []*Tensor) *Tensor { return swiGLUComposed(in[0], in[1]) }},
		{"ApplyRotary", []*Tensor{Randn(4, 256, 9, 64)},
			func(in []*Tensor) *Tensor { return ApplyRotary(in[0].Transpose(1, 2), cos, sin) },
			func(in []*Tensor) *Tensor { return rotaryComposed(in[0].Transpose(1, 2), cos, sin) }},
		{"CausalAttention", []*Tensor{Randn(4, 9, 256, 64), Randn(4, 3, 256, 64), Randn(4, 3, 256, 64)},
			func(in []*Tensor) *Tensor { return CausalAttention(in[0], in[1], in[2], 0) },
			func(in []*Tensor) *Tensor { return causalAttentionComposed(in[0], in[1], in[2], 0) }},
	}
	for _, c := range cases {
		for _, fused := range []bool{true, false} {
			f := c.composed
			name := c.name + "/composed"
			if fused {
				f, name = c.fused, c.name+"/fused"
			}
			b.Run(name, func(b *testing.B) {
				ins := make([]*Tensor, len(c.ins))
				for i, x := range c.ins {
					ins[i] = x.Detach().RequiresGrad()
				}
				for b.Loop() {
					y := f(ins)
					y.BackwardWith(OnesLike(y))
					for _, x := range ins {
						x.ZeroGrad()
					}
				}
			})
		}
	}
}
