package nn

import (
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestLinearBFloat16Weights checks a Linear whose weight and bias are
// bfloat16 (inference from a bfloat16 checkpoint): float32 inputs give
// float32 outputs within float32 rounding of the layer with the same
// values in float32, at a token's row and at a batch's; bfloat16 inputs
// give bfloat16 outputs within bfloat16 rounding of them.
func TestLinearBFloat16Weights(t *testing.T) {
	g := tensor.NewGenerator(3)
	l := NewLinearWith(40, 24, true, g)
	ref := NewLinearWith(40, 24, true, g)
	l.Weight, l.Bias = l.Weight.Detach().BFloat16(), l.Bias.Detach().BFloat16()
	ref.Weight, ref.Bias = l.Weight.ToDType(tensor.Float32), l.Bias.ToDType(tensor.Float32)
	for _, rows := range []int{1, 7} {
		x := g.Randn(rows, 40)
		y, want := l.Forward(x), ref.Forward(x)
		if y.DType() != tensor.Float32 {
			t.Fatalf("rows %d: float32 input gave %s", rows, y.DType())
		}
		w := want.Float32s()
		for i, v := range y.Float32s() {
			if math.Abs(float64(v-w[i])) > 1e-5*(math.Abs(float64(w[i]))+1) {
				t.Fatalf("rows %d: element %d = %v, float32 layer %v", rows, i, v, w[i])
			}
		}
		yb := l.Forward(x.BFloat16())
		if yb.DType() != tensor.BFloat16 {
			t.Fatalf("rows %d: bfloat16 input gave %s", rows, yb.DType())
		}
		wb := ref.Forward(x.BFloat16().ToDType(tensor.Float32)).Float32s()
		for i, v := range yb.Float32s() {
			// two roundings: the product (to 2⁻⁹ of itself, up to about
			// 2 here), then its sum with the bias
			if math.Abs(float64(v-wb[i])) > math.Abs(float64(wb[i]))*0x1p-8+4e-3 {
				t.Fatalf("rows %d: bfloat16 element %d = %v, float32 layer %v", rows, i, v, wb[i])
			}
		}
	}
}
