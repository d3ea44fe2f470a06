package tensor_test

import (
	"slices"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestSetFloat32s16 checks SetFloat32s on bfloat16 and float16 tensors:
// the values are rounded to nearest even as ToDType rounds them, at the
// offset given, the other elements untouched.
func TestSetFloat32s16(t *testing.T) {
	vals := []float32{1.00390625, -3.3, 65520, 1e-8}
	for _, dt := range []tensor.DType{tensor.BFloat16, tensor.Float16} {
		x := tensor.Zeros(2, 3).ToDType(dt)
		x.SetFloat32s(1, vals)
		want := tensor.New(append(append([]float32{0}, vals...), 0), 2, 3).ToDType(dt)
		if x.DType() != dt || !slices.Equal(x.Bits16(), want.Bits16()) {
			t.Errorf("%s: bits %x, want %x", dt, x.Bits16(), want.Bits16())
		}
	}
}
