package tensor

import (
	"fmt"
	"testing"

	"github.com/wickml/wick/internal/approx"
)

// fusedCase runs a fused op and its composition on clones of the same
// inputs, compares the outputs and, after backpropagating one random
// gradient through both, the gradients of every input.
func fusedCase(t *testing.T, ins []*Tensor, fused, composed func([]*Tensor) *Tensor, rtol, atol float64) {
	t.Helper()
	a, b := make([]*Tensor, len(ins)), make([]*Tensor, len(ins))
	for i, x := range ins {
		a[i] = x.Detach().Clone().RequiresGrad()
		b[i] = x.Detach().Clone().RequiresGrad()
	}
	y, want := fused(a), composed(b)
	approx.EqualTensor(t, "output", y, want, rtol, atol)
	g := Randn(y.Shape()...)
	y.BackwardWith(g)
	want.BackwardWith(g)
	for i := range ins {
		approx.EqualTensor(t, fmt.Sprintf("grad of input %d", i), a[i].Grad(), b[i].Grad(), 10*rtol, 10*atol)
	}
}

func TestRMSNormMatchesComposed(t *testing.T) {
	ManualSeed(11)
	for _, sh := range [][]int{{1, 1}, {3, 7}, {2, 5, 64}, {4, 3, 9, 33}} {
		n := sh[len(sh)-1]
		x := Randn(sh...).MulScalar(3)
		w := Randn(n)
		t.Run(fmt.Sprint(sh), func(t *testing.T) {
			fusedCase(t, []*Tensor{x, w}, func(in []*Tensor) *Tensor { return in[0].RMSNorm(in[1], 1e-6) },
				func(in []*Tensor) *Tensor { return rmsNormComposed(in[0], in[1], 1e-6) }, 1e-6, 1e-7)
			fusedCase(t, []*Tensor{x}, func(in []*Tensor) *Tensor { return in[0].RMSNorm(nil, 1e-5) },
				func(in []*Tensor) *Tensor { return rmsNormComposed(in[0], nil, 1e-5) }, 1e-6, 1e-7)
		})
	}
	// a non-contiguous input: the last two dims transposed
	x := Randn(2, 16, 8).Transpose(1, 2)
	fusedCase(t, []*Tensor{x, Randn(16)}, func(in []*Tensor) *Tensor { return in[0].RMSNorm(in[1], 1e-6) },
		func(in []*Tensor) *Tensor { return rmsNormComposed(in[0], in[1], 1e-6) }, 1e-6, 1e-7)
}

func TestRotaryMatchesComposed(t *testing.T) {
	ManualSeed(12)
	for _, sh := range [][]int{{3, 4}, {2, 3, 5, 8}, {1, 2, 7, 6}, {2, 2, 2, 3, 16}} {
		td := sh[len(sh)-2:]
		cos, sin := Randn(td...), Randn(td...)
		t.Run(fmt.Sprint(sh), func(t *testing.T) {
			fusedCase(t, []*Tensor{Randn(sh...)}, func(in []*Tensor) *Tensor { return ApplyRotary(in[0], cos, sin) },
				func(in []*Tensor) *Tensor { return rotaryComposed(in[0], cos, sin) }, 1e-6, 1e-7)
		})
	}
	// [B, T, H, D] viewed as [B, H, T, D], as attention layers pass heads,
	// and a view whose last dim is strided
	cos, sin := Randn(5, 8), Randn(5, 8)
	for _, x := range []*Tensor{Randn(2, 5, 3, 8).Transpose(1, 2), Randn(3, 8, 5).Transpose(1, 2)} {
		fusedCase(t, []*Tensor{x}, func(in []*Tensor) *Tensor { return ApplyRotary(in[0], cos, sin) },
			func(in []*Tensor) *Tensor { return rotaryComposed(in[0], cos, sin) }, 1e-6, 1e-7)
	}
	// cos and sin that need a gradient take the composition
	c := cos.Detach().RequiresGrad()
	y := ApplyRotary(Randn(1, 5, 8), c, sin)
	y.Sum().Backward()
	if c.Grad() == nil {
		t.Error("cos that requires a gradient got none")
	}
}

func TestSwiGLUMatchesComposed(t *testing.T) {
	ManualSeed(13)
	for _, sh := range [][]int{{1}, {7, 5}, {2, 3, 129}} {
		t.Run(fmt.Sprint(sh), func(t *testing.T) {
			fusedCase(t, []*Tensor{Randn(sh...).MulScalar(4), Randn(sh...)}, func(in []*Tensor) *Tensor { return SwiGLU(in[0], in[1]) },
				func(in []*Tensor) *Tensor { return swiGLUComposed(in[0], in[1]) }, 1e-6, 1e-7)
		})
	}
	gate := Randn(6, 4).T()
	fusedCase(t, []*Tensor{gate, Randn(4, 6)}, func(in []*Tensor) *Tensor { return SwiGLU(in[0], in[1]) },
		func(in []*Tensor) *Tensor { return swiGLUComposed(in[0], in[1]) }, 1e-6, 1e-7)
}

func TestCausalAttentionMatchesComposed(t *testing.T) {
	ManualSeed(14)
	for _, c := range []struct{ b, h, hkv, t, offset, d int }{
		{1, 1, 1, 1, 0, 4}, {2, 3, 3, 5, 0, 8}, {2, 6, 2, 7, 0, 8}, {1, 4, 1, 6, 0, 16},
		{2, 6, 2, 1, 9, 8}, {1, 4, 1, 3, 5, 4}, {2, 2, 2, 4, 3, 6},
	} {
		t.Run(fmt.Sprintf("B%d_H%d_Hkv%d_T%d_off%d_D%d", c.b, c.h, c.hkv, c.t, c.offset, c.d), func(t *testing.T) {
			s := c.offset + c.t
			q := Randn(c.b, c.t, c.h, c.d).Transpose(1, 2) // non-contiguous, as layers pass it
			k, v := Randn(c.b, c.hkv, s, c.d), Randn(c.b, c.hkv, s, c.d)
			fusedCase(t, []*Tensor{q, k, v}, func(in []*Tensor) *Tensor { return CausalAttention(in[0], in[1], in[2], c.offset) },
				func(in []*Tensor) *Tensor { return causalAttentionComposed(in[0], in[1], in[2], c.offset) }, 1e-5, 1e-6)
			// keys from a cache of capacity s+2, values with the heads
			// of a position side by side, as layers pass them
			fusedCase(t, []*Tensor{q, Randn(c.b, c.hkv, s+2, c.d), Randn(c.b, s, c.hkv, c.d)}, func(in []*Tensor) *Tensor {
				return CausalAttention(in[0], in[1].Slice(2, 0, s), in[2].Transpose(1, 2), c.offset)
			}, func(in []*Tensor) *Tensor {
				return causalAttentionComposed(in[0], in[1].Slice(2, 0, s), in[2].Transpose(1, 2), c.offset)
			}, 1e-5, 1e-6)
		})
	}
	// the layouts CausalAttention reads in place
	cache := Zeros(2, 3, 10, 4)
	for _, c := range []struct {
		name    string
		x       *Tensor
		inPlace bool
	}{
		{"contiguous", Zeros(2, 3, 5, 4), true},
		{"cache slice", cache.Slice(2, 0, 6), true},
		{"cache slice at a position", cache.Slice(2, 2, 6), true},
		{"one batch element, interleaved heads", Zeros(1, 5, 3, 4).Transpose(1, 2), true},
		{"one head, interleaved", Zeros(2, 5, 1, 4).Transpose(1, 2), true},
		{"interleaved heads", Zeros(2, 5, 3, 4).Transpose(1, 2), false},
		{"strided features", Zeros(2, 3, 4, 5).Transpose(2, 3), false},
	} {
		if got := kvView(c.x) == c.x; got != c.inPlace {
			t.Errorf("%s %v strides %v: read in place %v, want %v", c.name, c.x.Shape(), c.x.Strides(), got, c.inPlace)
		}
	}
}

// TestCausalAttentionRepeatKV checks the composition itself against
// attention over copied key/value heads (Hugging Face's repeat_kv) with
// the causal mask of ScaledDotProductAttention.
func TestCausalAttentionRepeatKV(t *testing.T) {
	ManualSeed(15)
	b, h, hkv, tt, d := 2, 6, 3, 5, 4
	q, k, v := Randn(b, h, tt, d), Randn(b, hkv, tt, d), Randn(b, hkv, tt, d)
	rep := func(x *Tensor) *Tensor {
		return x.Unsqueeze(2).Expand(b, hkv, h/hkv, tt, d).Reshape(b, h, tt, d)
	}
	want := ScaledDotProductAttention(q, rep(k), rep(v), true)
	approx.EqualTensor(t, "composed", causalAttentionComposed(q, k, v, 0), want, 1e-5, 1e-6)
	approx.EqualTensor(t, "fused", CausalAttention(q, k, v, 0), want, 1e-5, 1e-6)
}

func TestFusedLlamaGradCheck(t *testing.T) {
	ManualSeed(16)
	cos, sin := Randn(3, 4), Randn(3, 4)
	for name, f := range map[string]func([]*Tensor) *Tensor{
		"RMSNorm":         func(in []*Tensor) *Tensor { return in[0].RMSNorm(in[1], 1e-5) },
		"ApplyRotary":     func(in []*Tensor) *Tensor { return ApplyRotary(in[0], cos, sin) },
		"SwiGLU":          func(in []*Tensor) *Tensor { return SwiGLU(in[0], in[1]) },
		"CausalAttention": func(in []*Tensor) *Tensor { return CausalAttention(in[0], in[1], in[2].Reshape(1, 1, 4, 4), 1) },
	} {
		var in []*Tensor
		switch name {
		case "RMSNorm":
			in = []*Tensor{Randn(3, 4), Randn(4)}
		case "ApplyRotary":
			in = []*Tensor{Randn(2, 3, 4)}
		case "SwiGLU":
			in = []*Tensor{Randn(3, 4), Randn(3, 4)}
		case "CausalAttention":
			in = []*Tensor{Randn(1, 2, 3, 4), Randn(1, 1, 4, 4), Randn(4, 4)}
		}
		if err := GradCheck(f, in, GradCheckOptions{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestFusedLlamaPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"RMSNorm weight":     func() { Zeros(2, 3).RMSNorm(Zeros(4), 1e-5) },
		"RMSNorm 0-d":        func() { Scalar(1).RMSNorm(nil, 1e-5) },
		"ApplyRotary odd":    func() { ApplyRotary(Zeros(2, 3), Zeros(2, 3), Zeros(2, 3)) },
		"ApplyRotary shape":  func() { ApplyRotary(Zeros(2, 4), Zeros(3, 4), Zeros(3, 4)) },
		"SwiGLU shapes":      func() { SwiGLU(Zeros(2, 3), Zeros(3, 2)) },
		"CausalAttention S":  func() { CausalAttention(Zeros(1, 2, 3, 4), Zeros(1, 1, 3, 4), Zeros(1, 1, 3, 4), 1) },
		"CausalAttention Hk": func() { CausalAttention(Zeros(1, 3, 3, 4), Zeros(1, 2, 3, 4), Zeros(1, 2, 3, 4), 0) },
	} {
		if err := Catch(f); err == nil {
			t.Errorf("%s: did not panic", name)
		}
	}
}

// TestCausalAttentionBlocks runs the CPU's blocked grouped attention (T >
// 1) with blocks of 3, 5 and 10 positions, so that the skipped products
// and depths of several blocks, after cached positions or not, meet
// ragged lengths; the composition is the reference.
func TestCausalAttentionBlocks(t *testing.T) {
	exclusive(t)
	defer func(n int) { causalBlockTest = n }(causalBlockTest)
	ManualSeed(17)
	for _, blk := range []int{3, 5, 10} {
		causalBlockTest = blk
		for _, c := range []struct{ b, h, hkv, t, offset, d int }{
			{2, 6, 2, 17, 0, 8}, {1, 4, 1, 11, 6, 4}, {2, 3, 3, 23, 2, 16}, {1, 2, 2, 2, 0, 4},
		} {
			t.Run(fmt.Sprintf("block%d_B%d_H%d_Hkv%d_T%d_off%d", blk, c.b, c.h, c.hkv, c.t, c.offset), func(t *testing.T) {
				s := c.offset + c.t
				q, k, v := Randn(c.b, c.h, c.t, c.d), Randn(c.b, c.hkv, s+1, c.d), Randn(c.b, c.hkv, s, c.d)
				fusedCase(t, []*Tensor{q, k, v}, func(in []*Tensor) *Tensor { return CausalAttention(in[0], in[1].Slice(2, 1, s+1), in[2], c.offset) },
					func(in []*Tensor) *Tensor {
						return causalAttentionComposed(in[0], in[1].Slice(2, 1, s+1), in[2], c.offset)
					}, 1e-5, 1e-6)
			})
		}
	}
}
