package tensor

import (
	"testing"

	"github.com/wickml/wick/autograd"
)

// TestFreeList16: bfloat16 and float16 buffers go back to the free list
// and come out of it for the next storage of their length, zero-filled
// where the contract says so and poisoned like fresh memory otherwise; a
// float32 storage never takes a 16-bit buffer, nor the other way round;
// the list's bytes count two per 16-bit element.
func TestFreeList16(t *testing.T) {
	drainPool()
	for _, dt := range []DType{BFloat16, Float16} {
		a := Full(7, 4096).ToDType(dt)
		a.Release()
		f32Pool.mu.Lock()
		bytes := f32Pool.bytes
		f32Pool.mu.Unlock()
		if bytes != 2*4096 {
			t.Fatalf("%s: the free list holds %d bytes after releasing 4096 elements, want %d", dt, bytes, 2*4096)
		}
		hits := poolStats.hits.Load()
		f := Zeros(4096)
		if poolStats.hits.Load() != hits {
			t.Fatalf("%s: a float32 storage took a 16-bit buffer", dt)
		}
		f.Release() // now a float32 buffer of 4096 waits too
		hits16 := poolStats.hits16.Load()
		z := cpu.Alloc(dt, 4096).(*cpuStorage)
		if poolStats.hits16.Load() != hits16+1 {
			t.Fatalf("%s: Alloc did not take the released buffer", dt)
		}
		for i, v := range z.h {
			if v != 0 {
				t.Fatalf("%s: Alloc from the free list: element %d is %#04x, want 0", dt, i, v)
			}
		}
		z.Release()
		u := emptyOut("test", cpu, dt, []int{4096})
		if poolStats.hits16.Load() != hits16+2 {
			t.Fatalf("%s: emptyOut did not take the released buffer", dt)
		}
		for i, v := range u.storage.(*cpuStorage).h {
			if v != poison16 {
				t.Fatalf("%s: uninitialised buffer from the free list: element %d is %#04x, want the poison", dt, i, v)
			}
		}
		u.Release()
		drainPool()
	}
}

// autocastStep is one step of poolNet's network inside Autocast(BFloat16)
// (the first layer in a Scope, as nn's modules run), backward and update
// after it.
func (n *poolNet) autocastStep(x *Tensor) float32 {
	var loss *Tensor
	Autocast(BFloat16, func() {
		act := Scope(func() *Tensor { return x.MatMul(n.w1).Add(n.b1).GELU() })
		loss = act.MatMul(n.w2).Tanh().Square().Mean()
	})
	loss.Backward()
	autograd.NoGrad(func() {
		for _, p := range n.params() {
			p.Detach().CopyFrom(p.Detach().Sub(p.Grad().MulScalar(0.5)))
			p.ZeroGrad()
		}
	})
	return loss.Item()
}

// TestFreeList16Autocast trains poolNet's network inside autocast regions,
// whose buffers the free list recycles (the products round their float32
// operands while packing them, so most are float32 ones; the parameters'
// rounded bfloat16 copies are the region's), and gets the weights of the
// same training with no reuse at all, bit for bit. Inside a region under NoGrad
// a Scope's temporaries are recycled as it returns, and the parameters'
// rounded copies, the region's, survive it.
func TestFreeList16Autocast(t *testing.T) {
	train := func() [][]float32 {
		n := newPoolNet(3)
		x := NewGenerator(4).Randn(48, 32)
		for range 5 {
			n.autocastStep(x)
		}
		return snapshot(n.params())
	}
	drainPool()
	hits := poolStats.hits.Load()
	got := train()
	if poolStats.hits.Load()-hits < 5 {
		t.Fatalf("the free list served %d buffers in 5 steps; the test needs reuse to mean anything", poolStats.hits.Load()-hits)
	}
	old := poolMaxBytes.Load()
	poolMaxBytes.Store(0)
	drainPool()
	want := train()
	poolMaxBytes.Store(old)
	for i := range want {
		if !sameBits(got[i], want[i]) {
			t.Errorf("weight %d after autocast training with reuse differs from training without", i)
		}
	}

	n := newPoolNet(5)
	x := NewGenerator(6).Randn(48, 32)
	var first, second []float32
	autograd.NoGrad(func() {
		Autocast(BFloat16, func() {
			f := func() *Tensor { return Scope(func() *Tensor { return x.MatMul(n.w1).Add(n.b1).GELU().MatMul(n.w2) }) }
			first = f().Float32s()
			second = f().Float32s() // reads w1's and w2's rounded copies again
		})
	})
	if !sameBits(first, second) {
		t.Error("a second forward pass inside one region under NoGrad differs from the first")
	}
}
