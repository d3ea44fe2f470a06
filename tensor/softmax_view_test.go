package tensor_test

import (
	"math"
	"slices"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestSoftmaxContiguous checks that Softmax and LogSoftmax over any dim
// return contiguous tensors, so that View works on them as on PyTorch's
// (issue: View panicked on a softmax over dim 0).
func TestSoftmaxContiguous(t *testing.T) {
	x := tensor.Randn(2, 3, 4).RequiresGrad()
	for _, dim := range []int{0, 1, 2, -1, -3} {
		for _, f := range []func(int) *tensor.Tensor{x.Softmax, x.LogSoftmax} {
			y := f(dim)
			if !y.IsContiguous() {
				t.Fatalf("dim %d: result has strides %v, not contiguous", dim, y.Strides())
			}
			v := y.View(6, 4)
			if s := v.Shape(); !slices.Equal(s, []int{6, 4}) {
				t.Fatalf("dim %d: View(6, 4) has shape %v", dim, s)
			}
		}
	}
	// the values are the softmax along dim 0 and its gradient flows
	y := x.Softmax(0)
	sums := y.Sum(0).Float32s()
	for i, s := range sums {
		if math.Abs(float64(s)-1) > 1e-6 {
			t.Fatalf("sum over dim 0 at %d = %v", i, s)
		}
	}
	y.View(-1).Sum().Backward()
	if x.Grad() == nil {
		t.Fatal("no gradient through the contiguous result")
	}
}
