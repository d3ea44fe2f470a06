package tensor

import (
	"fmt"
	"math"
	"testing"
)

// relNorm is ‖got − want‖/‖want‖ over all elements.
func relNorm(got, want *Tensor) float64 {
	g, w := got.Float32s(), want.Float32s()
	var d, n float64
	for i := range w {
		d += (float64(g[i]) - float64(w[i])) * (float64(g[i]) - float64(w[i]))
		n += float64(w[i]) * float64(w[i])
	}
	return math.Sqrt(d / n)
}

// TestAutocastAttentionRounded checks AttentionQKV's fused kernel inside a
// region (RoundedAttention) against its composition there, whose products
// are autocast MatMuls, forward and backward, causal or not, in bfloat16
// and float16, on one causal block and on several: the two agree to
// float32 sums in another order (a rounding to 16 bits landing on the
// other side now and then), 1e-6 relative in norm (measured: below 1e-7
// in bfloat16, 0 in float16), while both differ from the float32 kernel
// by the 16-bit roundings (more than 1e-4).
func TestAutocastAttentionRounded(t *testing.T) {
	defer func(n int) { causalBlockTest = n }(causalBlockTest)
	for _, c := range []struct {
		b, t, nh, hs, block int
		causal              bool
	}{
		{2, 20, 2, 8, 0, true}, {2, 20, 2, 8, 0, false}, {1, 37, 3, 16, 8, true}, {2, 64, 2, 32, 0, true},
	} {
		for _, dt := range []DType{BFloat16, Float16} {
			name := fmt.Sprintf("%s/B%d_T%d_nh%d_hs%d_block%d_causal%v", dt, c.b, c.t, c.nh, c.hs, c.block, c.causal)
			t.Run(name, func(t *testing.T) {
				causalBlockTest = c.block
				gen := NewGenerator(uint64(c.t + c.hs))
				x := gen.Randn(c.b, c.t, 3*c.nh*c.hs).MulScalar(1.5)
				w := gen.Randn(c.b, c.t, c.nh*c.hs)
				run := func(ac bool, f func(*Tensor) *Tensor) (*Tensor, *Tensor) {
					in := x.Detach().RequiresGrad()
					var y *Tensor
					if ac {
						Autocast(dt, func() { y = f(in) })
					} else {
						y = f(in)
					}
					y.Mul(w).Sum().Backward()
					return y, in.Grad()
				}
				fused := func(in *Tensor) *Tensor { return AttentionQKV(in, c.nh, c.causal) }
				composed := func(in *Tensor) *Tensor { return attentionComposed(in, c.nh, c.causal) }
				y, g := run(true, fused)
				yc, gc := run(true, composed)
				y32, g32 := run(false, fused)
				if y.DType() != Float32 || g.DType() != Float32 {
					t.Fatalf("y %s, gradient %s: want float32", y.DType(), g.DType())
				}
				for _, p := range []struct {
					what      string
					got, comp *Tensor
					fp32      *Tensor
				}{{"y", y, yc, y32}, {"dqkv", g, gc, g32}} {

					if e := relNorm(p.got, p.comp); e > 1e-6 {
						t.Errorf("%s: ‖fused − composed‖/‖composed‖ = %.2e, want ≤ 1e-6", p.what, e)
					}
					if e := relNorm(p.got, p.fp32); e < 1e-4 {
						t.Errorf("%s: ‖fused − float32‖/‖float32‖ = %.2e: the operands did not round", p.what, e)
					}
				}
			})
		}
	}
}

// TestAutocastCausalAttentionRounded is TestAutocastAttentionRounded for
// CausalAttention (RoundedGroupedAttention): grouped key/value heads,
// queries after cached positions (offset > 0) and keys and values read
// through a slice of a larger cache.
func TestAutocastCausalAttentionRounded(t *testing.T) {
	defer func(n int) { causalBlockTest = n }(causalBlockTest)
	for _, c := range []struct {
		b, h, hkv, t, d, offset, block int
		sliced                         bool
	}{
		{2, 4, 2, 20, 8, 0, 0, false}, {1, 3, 3, 37, 16, 0, 8, false}, {2, 4, 1, 12, 8, 5, 4, true}, {1, 2, 2, 64, 32, 0, 0, true},
	} {
		for _, dt := range []DType{BFloat16, Float16} {
			name := fmt.Sprintf("%s/B%d_H%d_Hkv%d_T%d_D%d_offset%d_block%d_sliced%v", dt, c.b, c.h, c.hkv, c.t, c.d, c.offset, c.block, c.sliced)
			t.Run(name, func(t *testing.T) {
				causalBlockTest = c.block
				gen := NewGenerator(uint64(c.t + c.d + c.offset))
				s := c.offset + c.t
				q0 := gen.Randn(c.b, c.h, c.t, c.d).MulScalar(1.5)
				k0 := gen.Randn(c.b, c.hkv, s+3, c.d).MulScalar(1.5)
				v0 := gen.Randn(c.b, c.hkv, s+3, c.d)
				w := gen.Randn(c.b, c.h, c.t, c.d)
				run := func(ac bool, f func(q, k, v *Tensor) *Tensor) (*Tensor, []*Tensor) {
					q, k, v := q0.Detach().RequiresGrad(), k0.Detach().RequiresGrad(), v0.Detach().RequiresGrad()
					var y *Tensor
					body := func() {
						kk, vv := k.Narrow(2, 0, s), v.Narrow(2, 0, s)
						if !c.sliced {
							kk, vv = kk.Contiguous(), vv.Contiguous()
						}
						y = f(q, kk, vv)
					}
					if ac {
						Autocast(dt, body)
					} else {
						body()
					}
					y.Mul(w).Sum().Backward()
					return y, []*Tensor{q.Grad(), k.Grad(), v.Grad()}
				}
				fused := func(q, k, v *Tensor) *Tensor { return CausalAttention(q, k, v, c.offset) }
				composed := func(q, k, v *Tensor) *Tensor { return causalAttentionComposed(q, k, v, c.offset) }
				y, g := run(true, fused)
				yc, gc := run(true, composed)
				y32, g32 := run(false, fused)
				got, comp, fp32 := append([]*Tensor{y}, g...), append([]*Tensor{yc}, gc...), append([]*Tensor{y32}, g32...)
				for i, what := range []string{"y", "dq", "dk", "dv"} {
					if got[i].DType() != Float32 {
						t.Fatalf("%s: %s, want float32", what, got[i].DType())
					}
					if e := relNorm(got[i], comp[i]); e > 1e-6 {
						t.Errorf("%s: ‖fused − composed‖/‖composed‖ = %.2e, want ≤ 1e-6", what, e)
					}
					if e := relNorm(got[i], fp32[i]); e < 1e-4 {
						t.Errorf("%s: ‖fused − float32‖/‖float32‖ = %.2e: the operands did not round", what, e)
					}
				}
			})
		}
	}
}
