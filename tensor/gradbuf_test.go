package tensor

import (
	"slices"
	"strings"
	"testing"
)

func TestFromHostFloat32sShares(t *testing.T) {
	data := []float32{1, 2, 3, 4, 5, 6}
	x := FromHostFloat32s(data[2:6], 2, 2)
	if got := x.Float32s(); !slices.Equal(got, []float32{3, 4, 5, 6}) {
		t.Fatalf("FromHostFloat32s = %v", got)
	}
	x.Fill_(9)
	if !slices.Equal(data, []float32{1, 2, 9, 9, 9, 9}) {
		t.Fatalf("a write through the tensor left the slice %v", data)
	}
	data[5] = 7
	if x.At(1, 1) != 7 || x.Offset() != 0 {
		t.Fatalf("a write to the slice does not show in the tensor: %v, offset %d", x.Float32s(), x.Offset())
	}
	if err := Catch(func() { FromHostFloat32s(data, 4) }); err == nil || !strings.Contains(err.Error(), "FromHostFloat32s") {
		t.Errorf("6 elements as shape [4]: %v, want a panic naming FromHostFloat32s", err)
	}
}

// TestSetGradBuffer checks that Backward writes scale·g into the buffer
// (against a twin parameter without one), adds into it while Grad is the
// buffer, overwrites it after ZeroGrad, and ignores it when Grad was set
// to another tensor.
func TestSetGradBuffer(t *testing.T) {
	for _, scale := range []float32{1, 0.5, 1.0 / 3} {
		x := New([]float32{1, -2, 3, 0.5, 4, -1}, 2, 3)
		mk := func() *Tensor { return New([]float32{0.3, -0.1, 0.2, 0.7, -0.5, 0.4}, 3, 2).RequiresGrad() }
		w, twin := mk(), mk()
		mem := make([]float32, 8)
		buf := FromHostFloat32s(mem[1:7], 3, 2)
		w.SetGradBuffer(buf, scale)
		if b, s := w.GradBuffer(); b != buf || s != scale {
			t.Fatalf("GradBuffer = %v, %v", b, s)
		}
		step := func(p *Tensor) { x.MatMul(p).Tanh().Sum().Backward() }
		check := func(what string) {
			t.Helper()
			want := twin.Grad().Float32s()
			for i := range want {
				want[i] *= scale
			}
			got := w.Grad().Float32s()
			for i := range got {
				if d := got[i] - want[i]; d > 1e-6 || d < -1e-6 {
					t.Fatalf("scale %v, %s: gradient %v, want %v", scale, what, got, want)
				}
			}
			if w.Grad() != buf || mem[0] != 0 || mem[7] != 0 {
				t.Fatalf("scale %v, %s: Grad is not the buffer, or the neighbours were written: %v", scale, what, mem)
			}
		}
		step(w)
		step(twin)
		check("first backward")
		step(w)
		step(twin)
		check("accumulated")
		w.ZeroGrad()
		twin.ZeroGrad()
		step(w)
		step(twin)
		check("after ZeroGrad")
		// A gradient set by hand is accumulated as without a buffer.
		own := Ones(3, 2)
		w.SetGrad(own)
		before := slices.Clone(mem)
		step(w)
		if w.Grad() == buf || !slices.Equal(mem, before) {
			t.Fatalf("scale %v: with a gradient set by SetGrad, Backward wrote into the buffer", scale)
		}
		w.SetGradBuffer(nil, 0)
		w.ZeroGrad()
		step(w)
		if w.Grad() == buf {
			t.Fatalf("scale %v: SetGradBuffer(nil, 0) left the buffer in use", scale)
		}
	}
}

func TestSetGradBufferPanics(t *testing.T) {
	w := Zeros(2, 3).RequiresGrad()
	for name, f := range map[string]func(){
		"not requiring grad": func() { Zeros(2, 3).SetGradBuffer(Zeros(2, 3), 1) },
		"non-leaf":           func() { w.MulScalar(2).SetGradBuffer(Zeros(2, 3), 1) },
		"shape":              func() { w.SetGradBuffer(Zeros(3, 2), 1) },
		"offset":             func() { w.SetGradBuffer(Zeros(3, 3).Narrow(0, 1, 2), 1) },
		"transposed":         func() { w.SetGradBuffer(Zeros(3, 2).T(), 1) },
		"requires grad":      func() { w.SetGradBuffer(Zeros(2, 3).RequiresGrad(), 1) },
		"int64":              func() { w.SetGradBuffer(FromInts(make([]int, 6), 2, 3), 1) },
	} {
		if err := Catch(f); err == nil || !strings.Contains(err.Error(), "SetGradBuffer") {
			t.Errorf("%s: %v, want a panic naming SetGradBuffer", name, err)
		}
	}
}

// TestSetGradBuffer16 checks a gradient buffer of a bfloat16 or float16
// leaf: it must have the leaf's dtype (a float32 one is refused), and with
// scale 1 it holds the bits the leaf's own Grad would (each accumulation
// rounded to the dtype).
func TestSetGradBuffer16(t *testing.T) {
	x := New([]float32{1, -2, 3, 0.5, 4, -1}, 2, 3)
	for _, dt := range []DType{BFloat16, Float16} {
		xd := x.ToDType(dt)
		mk := func() *Tensor {
			return New([]float32{0.3, -0.1, 0.2, 0.7, -0.5, 0.4}, 3, 2).ToDType(dt).RequiresGrad()
		}
		w, twin := mk(), mk()
		if err := Catch(func() { w.SetGradBuffer(Zeros(3, 2), 1) }); err == nil || !strings.Contains(err.Error(), dt.String()) {
			t.Fatalf("%s leaf, float32 buffer: %v, want an error naming %s", dt, err, dt)
		}
		buf := Zeros(3, 2).ToDType(dt)
		w.SetGradBuffer(buf, 1)
		step := func(p *Tensor) { xd.MatMul(p).Tanh().Sum().Backward() }
		for i, what := range []string{"first backward", "accumulated"} {
			step(w)
			step(twin)
			if w.Grad() != buf || w.Grad().DType() != dt {
				t.Fatalf("%s, %s: Grad is not the buffer", dt, what)
			}
			if got, want := buf.Bits16(), twin.Grad().Bits16(); !slices.Equal(got, want) {
				t.Fatalf("%s, %s (%d): buffer %#04x, Grad without one %#04x", dt, what, i, got, want)
			}
		}
	}
}
