package tensor

import (
	"fmt"
	"testing"

	"github.com/wickml/wick/internal/approx"
)

// TestAttentionQKVMatchesComposed checks the fused attention kernels
// against the composition of primitive ops they replace: outputs and the
// gradient of qkv, causal and not, on ragged shapes.
func TestAttentionQKVMatchesComposed(t *testing.T) {
	ManualSeed(7)
	for _, s := range []struct{ b, t, nh, hs int }{{1, 1, 1, 1}, {2, 5, 3, 4}, {3, 17, 2, 7}, {2, 64, 4, 32}} {
		for _, causal := range []bool{true, false} {
			t.Run(fmt.Sprintf("B%d_T%d_nh%d_hs%d_causal%v", s.b, s.t, s.nh, s.hs, causal), func(t *testing.T) {
				c := s.nh * s.hs
				x := Randn(s.b, s.t, 3*c).MulScalar(2).Detach().RequiresGrad()
				x2 := x.Detach().Clone().RequiresGrad()
				gy := Randn(s.b, s.t, c)
				y := AttentionQKV(x, s.nh, causal)
				want := attentionComposed(x2, s.nh, causal)
				approx.EqualTensor(t, "output", y, want, 1e-5, 1e-6)
				y.BackwardWith(gy)
				want.BackwardWith(gy)
				approx.EqualTensor(t, "grad", x.Grad(), x2.Grad(), 1e-4, 1e-5)
			})
		}
	}
}

func TestAttentionQKVGradCheck(t *testing.T) {
	ManualSeed(3)
	x := Randn(2, 4, 3*6)
	for _, causal := range []bool{true, false} {
		err := GradCheck(func(in []*Tensor) *Tensor { return AttentionQKV(in[0], 2, causal) }, []*Tensor{x}, GradCheckOptions{})
		if err != nil {
			t.Errorf("causal=%v: %v", causal, err)
		}
	}
}

func TestAttentionQKVPanics(t *testing.T) {
	err := Catch(func() { AttentionQKV(Zeros(2, 3, 10), 2, true) })
	if err == nil {
		t.Fatal("AttentionQKV on [2 3 10] with 2 heads did not panic")
	}
}

func BenchmarkAttentionQKV(b *testing.B) {
	NoPoison(b)
	ManualSeed(1)
	for _, fused := range []bool{true, false} {
		b.Run(fmt.Sprintf("fused=%v", fused), func(b *testing.B) {
			x := Randn(12, 64, 3*128).RequiresGrad()
			gy := Randn(12, 64, 128)
			for b.Loop() {
				var y *Tensor
				if fused {
					y = AttentionQKV(x, 4, true)
				} else {
					y = attentionComposed(x, 4, true)
				}
				y.BackwardWith(gy)
				x.ZeroGrad()
			}
		})
	}
}
