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
