package tensor

import (
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/wickml/wick/autograd"
)

// rounded returns x's values rounded to bfloat16 and back, detached.
func rounded(x *Tensor) *Tensor { return x.Detach().BFloat16().ToDType(Float32) }

// closeTo fails unless got and want (float32 tensors of one shape) agree to
// a float32 sum's rounding, scaled by the largest |want|.
func closeTo(t *testing.T, what string, got, want *Tensor, rtol float64) {
	t.Helper()
	if !slices.Equal(got.Shape(), want.Shape()) || got.DType() != Float32 {
		t.Fatalf("%s: got %s %v, want float32 %v", what, got.DType(), got.Shape(), want.Shape())
	}
	g, w := got.Float32s(), want.Float32s()
	var scale float64
	for _, v := range w {
		scale = max(scale, math.Abs(float64(v)))
	}
	for i := range w {
		if d := math.Abs(float64(g[i]) - float64(w[i])); d > rtol*scale {
			t.Fatalf("%s[%d] = %v, want %v (|diff| %.3g > %.3g)", what, i, g[i], w[i], d, rtol*scale)
		}
	}
}

// differs reports whether some element of a and b differs.
func differs(a, b *Tensor) bool { return !slices.Equal(a.Float32s(), b.Float32s()) }

// TestAutocastMatMul checks a product and its gradients inside a region
// against the same product of operands rounded by hand: 16-bit operands,
// float32 sums and results, the output's gradient rounded once, float32
// gradients into float32 leaves; also for 1-D operands, a batch folded
// into rows and batch dims broadcast both ways.
func TestAutocastMatMul(t *testing.T) {
	gen := NewGenerator(28)
	cases := []struct{ a, b []int }{
		{[]int{5, 7}, []int{7, 3}},
		{[]int{2, 4, 7}, []int{7, 3}},       // folded into [8, 7]·[7, 3]
		{[]int{2, 1, 4, 7}, []int{3, 7, 5}}, // both broadcast
		{[]int{7}, []int{7, 4}},
		{[]int{3, 7}, []int{7}},
	}
	for _, c := range cases {
		a := gen.Randn(c.a...).RequiresGrad()
		b := gen.Randn(c.b...).RequiresGrad()
		var y *Tensor
		Autocast(BFloat16, func() { y = a.MatMul(b) })
		if y.DType() != Float32 || !y.IsRequiringGrad() {
			t.Fatalf("%v·%v: result %s, requires grad %v; want float32 and recorded", c.a, c.b, y.DType(), y.IsRequiringGrad())
		}
		ar, br := rounded(a), rounded(b)
		want := ar.MatMul(br)
		closeTo(t, "product", y, want, 1e-6)
		if !differs(y, a.Detach().MatMul(b.Detach())) {
			t.Errorf("%v·%v: the product equals the float32 one: operands not rounded", c.a, c.b)
		}
		g := gen.Randn(y.Shape()...)
		y.BackwardWith(g)
		// the same gradients from the rounded operands and the rounded
		// output gradient, outside any region (recorded on fresh leaves)
		ar.RequiresGrad()
		br.RequiresGrad()
		ar.MatMul(br).BackwardWith(rounded(g))
		for _, p := range []struct {
			name      string
			got, want *Tensor
		}{{"grad a", a.Grad(), ar.Grad()}, {"grad b", b.Grad(), br.Grad()}} {
			if p.got == nil || p.got.DType() != Float32 {
				t.Fatalf("%v·%v: %s is %v, want a float32 gradient", c.a, c.b, p.name, p.got)
			}
			closeTo(t, p.name, p.got, p.want, 1e-6)
		}
	}
}

// TestAutocastCastsParameterOnce: a parameter read by several products of
// one region, directly and through views (Linear's Wᵀ), is rounded once,
// its gradient is the sum over the uses, an activation is not kept, and
// the next region rounds the parameter's new values.
func TestAutocastCastsParameterOnce(t *testing.T) {
	gen := NewGenerator(7)
	w := gen.Randn(4, 6).RequiresGrad()
	x := gen.Randn(3, 6)
	var y *Tensor
	var r *autocastRegion
	var first int
	Autocast(BFloat16, func() {
		r = currentAutocast()
		h := x.MatMul(w.T()) // [3, 4], through a view first
		if first = len(r.cache); r.cache[w.storage] == nil {
			first = -1
		}
		y = h.MatMul(w).Add(x.MatMul(w.Transpose(0, 1)).MatMul(w)) // w four times
	})
	if first != 1 || len(r.cache) != 1 || r.cache[w.storage] == nil {
		t.Fatalf("the region holds %d rounded storages after the first product (-1: not w's), %d after all (w's: %v); want w's alone, rounded", first, len(r.cache), r.cache[w.storage] != nil)
	}
	y.Sum().Backward()
	if w.Grad() == nil || w.Grad().DType() != Float32 {
		t.Fatalf("w's gradient %v, want float32", w.Grad())
	}
	// w's gradient sums four uses in float32; against the float32
	// graph's, to bfloat16 tolerances
	wf := w.Detach().Clone().RequiresGrad()
	hf := x.MatMul(wf.T())
	hf.MatMul(wf).Add(x.MatMul(wf.Transpose(0, 1)).MatMul(wf)).Sum().Backward()
	closeTo(t, "grad w", w.Grad(), wf.Grad(), 3e-2)

	// a new region sees the parameter's new values
	autograd.NoGrad(func() { w.Fill_(0.5) })
	var z *Tensor
	Autocast(BFloat16, func() { z = x.MatMul(w.T()) })
	closeTo(t, "after an update", z, rounded(x).MatMul(Full(0.5, 6, 4)), 1e-6)
}

// TestAutocastScopes: Autocast(Float32) switches it off inside, regions
// nest, AutocastDType reports the goroutine's region, other dtypes panic.
func TestAutocastScopes(t *testing.T) {
	gen := NewGenerator(3)
	a, b := gen.Randn(4, 5), gen.Randn(5, 3)
	plain := a.MatMul(b)
	if _, on := AutocastDType(); on {
		t.Fatal("autocast on outside any region")
	}
	var off, on *Tensor
	Autocast(BFloat16, func() {
		if dt, ok := AutocastDType(); !ok || dt != BFloat16 {
			t.Errorf("AutocastDType() = %s, %v inside Autocast(BFloat16)", dt, ok)
		}
		Autocast(Float32, func() {
			if _, ok := AutocastDType(); ok {
				t.Error("autocast on inside Autocast(Float32)")
			}
			off = a.MatMul(b)
		})
		Autocast(BFloat16, func() { on = a.MatMul(b) })
	})
	if differs(off, plain) {
		t.Error("a product inside Autocast(Float32) is not the float32 one")
	}
	closeTo(t, "nested", on, rounded(a).MatMul(rounded(b)), 1e-6)
	var err *Error
	if e := Catch(func() { Autocast(Int64, func() {}) }); !errors.As(e, &err) || err.Op != "Autocast" {
		t.Errorf("Autocast(Int64) = %v, want an *Error from Autocast", e)
	}
	// integer operands are not the region's business
	Autocast(BFloat16, func() {
		if e := Catch(func() { FromInts([]int{1, 2}, 1, 2).MatMul(FromInts([]int{1, 2}, 2, 1)) }); e == nil {
			t.Error("an Int64 product inside a region did not panic as it does outside")
		}
	})
}

// TestAutocastAttention: inside a region the fused attention operations
// compute their products with rounded operands (in their fused kernels,
// RoundedAttention and RoundedGroupedAttention), so they differ from the
// float32 kernels by bfloat16 rounding only, with float32 results and
// gradients.
func TestAutocastAttention(t *testing.T) {
	gen := NewGenerator(11)
	qkv := gen.Randn(2, 5, 3*8).RequiresGrad()
	q := gen.Randn(1, 4, 3, 4).RequiresGrad()
	k := gen.Randn(1, 2, 3, 4).RequiresGrad()
	v := gen.Randn(1, 2, 3, 4).RequiresGrad()
	fused := AttentionQKV(qkv.Detach(), 2, true)
	causal := CausalAttention(q.Detach(), k.Detach(), v.Detach(), 0)
	var y, c *Tensor
	Autocast(BFloat16, func() {
		y = AttentionQKV(qkv, 2, true)
		c = CausalAttention(q, k, v, 0)
	})
	for _, p := range []struct {
		name   string
		got    *Tensor
		fp32   *Tensor
		inputs []*Tensor
	}{{"AttentionQKV", y, fused, []*Tensor{qkv}}, {"CausalAttention", c, causal, []*Tensor{q, k, v}}} {
		if !differs(p.got, p.fp32) {
			t.Errorf("%s inside a region equals the float32 kernel's", p.name)
		}
		closeTo(t, p.name, p.got, p.fp32, 3e-2)
		p.got.Sum().Backward()
		for i, in := range p.inputs {
			if in.Grad() == nil || in.Grad().DType() != Float32 {
				t.Errorf("%s: input %d's gradient %v, want float32", p.name, i, in.Grad())
			}
		}
	}
}

// TestAutocastGoroutines runs products on goroutines inside and outside
// regions at once (go test -race): each gets the result it gets alone,
// bit for bit, so a region never leaks into another goroutine.
func TestAutocastGoroutines(t *testing.T) {
	gen := NewGenerator(5)
	x, w0 := gen.Randn(8, 16), gen.Randn(12, 16)
	run := func(auto bool) (y, g []float32) {
		w := w0.Clone().RequiresGrad()
		f := func() { y = nil; out := x.MatMul(w.T()); y = out.Float32s(); out.Sum().Backward() }
		if auto {
			Autocast(BFloat16, f)
		} else {
			f()
		}
		return y, w.Grad().Float32s()
	}
	wantAuto, wantAutoGrad := run(true)
	wantPlain, wantPlainGrad := run(false)
	if slices.Equal(wantAuto, wantPlain) {
		t.Fatal("the autocast product equals the float32 one")
	}
	var wg sync.WaitGroup
	var bad [4]int
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			auto := g%2 == 0
			want, wantGrad := wantPlain, wantPlainGrad
			if auto {
				want, wantGrad = wantAuto, wantAutoGrad
			}
			for range 200 {
				y, gr := run(auto)
				if !slices.Equal(y, want) || !slices.Equal(gr, wantGrad) {
					bad[g]++
				}
			}
		}()
	}
	wg.Wait()
	for g, n := range bad {
		if n > 0 {
			t.Errorf("goroutine %d (autocast %v): %d of 200 results differ from its result alone", g, g%2 == 0, n)
		}
	}
}

// TestRoundBF16 checks the rounding loop of autocast against
// BF16FromFloat32 (PyTorch's cast, tested on its goldens) on ties, NaNs,
// infinities, subnormals and values that overflow.
func TestRoundBF16(t *testing.T) {
	src := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1.00390625, 1.01171875, 3.4e38, -3.4e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xFF800001),
		math.Float32frombits(0x00000001), math.Float32frombits(0x807FFFFF), 0.1, -2.5e-3, 65504, 1e-40}
	gen := NewGenerator(9)
	src = append(src, gen.Randn(1000).Float32s()...)
	dst := make([]uint16, len(src))
	roundBF16(dst, src)
	for i, v := range src {
		if want := BF16FromFloat32(v); dst[i] != want {
			t.Errorf("roundBF16(%v = %#08x) = %#04x, BF16FromFloat32 gives %#04x", v, math.Float32bits(v), dst[i], want)
		}
	}
}

// TestAutocastCheckpoint: a Checkpoint whose forward pass ran inside a
// region recomputes inside one in the backward pass (outside any), so the
// gradients equal those of the same function called directly.
func TestAutocastCheckpoint(t *testing.T) {
	gen := NewGenerator(4)
	x := gen.Randn(6, 8)
	w1, w2 := gen.Randn(8, 8), gen.Randn(8, 5)
	f := func(in []*Tensor) *Tensor { return in[0].MatMul(in[1]).GELU().MatMul(in[2]) }
	grads := func(ckpt bool) [][]float32 {
		a, b := w1.Clone().RequiresGrad(), w2.Clone().RequiresGrad()
		var y *Tensor
		Autocast(BFloat16, func() {
			if ckpt {
				y = Checkpoint(f, x, a, b)
			} else {
				y = f([]*Tensor{x, a, b})
			}
		})
		y.Sum().Backward()
		return [][]float32{a.Grad().Float32s(), b.Grad().Float32s()}
	}
	direct, ck := grads(false), grads(true)
	for i := range direct {
		if !slices.Equal(direct[i], ck[i]) {
			t.Errorf("gradient %d through Checkpoint differs from the direct one", i)
		}
	}
}
