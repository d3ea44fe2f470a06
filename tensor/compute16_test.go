package tensor

import (
	"strings"
	"testing"
)

// TestCompute16Names checks that the ops computed in float32 for a 16-bit
// input give a result of the input's dtype that prints the op's grad_fn
// (not the cast's), and a gradient of the leaf's dtype; ArgMax stays
// Int64.
func TestCompute16Names(t *testing.T) {
	for _, dt := range []DType{BFloat16, Float16} {
		x := New([]float32{1, 2, 3, 4, 5, 6}, 2, 3).ToDType(dt).RequiresGrad()
		for _, c := range []struct {
			name string
			y    *Tensor
		}{
			{"Sum", x.Sum()},
			{"Mean", x.Mean(1)},
			{"Softmax", x.Softmax(-1)},
			{"LayerNorm", x.LayerNorm(nil, nil, 1e-5)},
			{"Cumsum", x.Cumsum(1)},
			{"Sort", func() *Tensor { v, _ := x.Sort(1, true); return v }()},
		} {
			if c.y.DType() != dt {
				t.Errorf("%s of %s: dtype %s", c.name, dt, c.y.DType())
			}
			if s := c.y.String(); !strings.Contains(s, "grad_fn=<"+c.name+"Backward0>") || !strings.Contains(s, "dtype=torch."+dt.String()) {
				t.Errorf("%s of %s prints %s", c.name, dt, s)
			}
		}
		if a := x.ArgMax(1); a.DType() != Int64 {
			t.Errorf("ArgMax of %s: dtype %s", dt, a.DType())
		}
		x.Softmax(-1).Sum().Backward()
		if g := x.Grad(); g == nil || g.DType() != dt {
			t.Fatalf("%s leaf: gradient %v", dt, g)
		}
	}
}

// TestDropout16 checks Dropout of a 16-bit tensor: the float32 mask of the
// same generator, its scale 1/(1−p) rounded to the dtype (PyTorch's mask
// has the input's dtype), each product rounded once; the gradient is the
// upstream one through the same mask, in the dtype.
func TestDropout16(t *testing.T) {
	const p = 0.1
	x32 := NewGenerator(3).Randn(6, 50)
	for _, dt := range []DType{BFloat16, Float16} {
		h := halfOf(dt)
		x := x32.ToDType(dt).RequiresGrad()
		y := x.DropoutWith(p, true, NewGenerator(9))
		m := Ones(6, 50).DropoutWith(p, true, NewGenerator(9)).Float32s() // the mask
		if y.DType() != dt {
			t.Fatalf("%s: dtype %s", dt, y.DType())
		}
		scale := h.to(h.from(1 / (1 - p)))
		xs, ys := x.Detach().Float32s(), y.Float32s()
		kept := 0
		for i, v := range ys {
			want := float32(0)
			if m[i] != 0 {
				want = h.to(h.from(xs[i] * scale))
				kept++
			}
			if v != want {
				t.Fatalf("%s: element %d = %v, want %v (x %v, mask %v)", dt, i, v, want, xs[i], m[i])
			}
		}
		if kept == 0 || kept == len(ys) {
			t.Fatalf("%s: %d of %d kept", dt, kept, len(ys))
		}
		y.BackwardWith(OnesLike(y))
		for i, v := range x.Grad().Float32s() {
			want := float32(0)
			if m[i] != 0 {
				want = scale
			}
			if v != want {
				t.Fatalf("%s: gradient %d = %v, want %v", dt, i, v, want)
			}
		}
	}
}
