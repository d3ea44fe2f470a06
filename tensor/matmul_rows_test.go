package tensor_test

import (
	"math"
	"testing"

	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/tensor"
)

// TestMatMulRowInvariant checks that every row of MatMulRowInvariant's
// product has the bits of that row multiplied alone, whatever the number
// of rows, for a Linear weight's transpose and for other views, and that
// it agrees with MatMul to rounding and passes MatMul's gradients.
func TestMatMulRowInvariant(t *testing.T) {
	g := tensor.NewGenerator(7)
	for _, sz := range []struct{ n, k int }{{1, 1}, {3, 5}, {64, 48}, {130, 77}, {515, 96}} {
		w := g.Randn(sz.n, sz.k)
		for _, wt := range []*tensor.Tensor{w.T(), w.T().Contiguous()} {
			for _, m := range []int{1, 3, 4, 5, 17, 40} {
				x := g.Randn(sz.k, m).T() // a transposed view: copied
				y := x.MatMulRowInvariant(wt)
				full := x.MatMul(wt)
				got, ref := y.Float32s(), full.Float32s()
				for i := range m {
					alone := x.Slice(0, i, i+1).Contiguous().MatMulRowInvariant(w.T()).Float32s()
					for j := range sz.n {
						v := got[i*sz.n+j]
						if math.Float32bits(v) != math.Float32bits(alone[j]) {
							t.Fatalf("n=%d k=%d m=%d: [%d][%d] = %v among %d rows, %v alone", sz.n, sz.k, m, i, j, v, m, alone[j])
						}
						if !approx.Scalar(float64(v), float64(ref[i*sz.n+j]), 1e-4, 1e-4) {
							t.Fatalf("n=%d k=%d m=%d: [%d][%d] = %v, MatMul %v", sz.n, sz.k, m, i, j, v, ref[i*sz.n+j])
						}
					}
				}
			}
		}
	}
	a, b := g.Randn(6, 5).RequiresGrad(), g.Randn(4, 5).RequiresGrad()
	a.MatMulRowInvariant(b.T()).Sum().Backward()
	a2, b2 := a.Detach().RequiresGrad(), b.Detach().RequiresGrad()
	a2.MatMul(b2.T()).Sum().Backward()
	for _, p := range [][2]*tensor.Tensor{{a, a2}, {b, b2}} {
		got, want := p[0].Grad().Float32s(), p[1].Grad().Float32s()
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("gradient %v, MatMul's %v", got, want)
			}
		}
	}
}
