package tensor

import (
	"math"
	"testing"
)

// TestReduceAllFastPath checks full reductions of contiguous tensors (one
// line, split across workers when long) against float64 sums of the
// elements and against reducing one dim at a time, on sizes around the
// split threshold and a contiguous view at an offset.
func TestReduceAllFastPath(t *testing.T) {
	ManualSeed(5)
	for _, shape := range [][]int{{3, 5}, {256, 255}, {256, 256}, {2, 3, 11000}, {129, 1031}, {70001}} {
		x := Randn(shape...).AddScalar(0.25)
		xs := x.Float32s()
		var want float64
		mx, mn := float32(math.Inf(-1)), float32(math.Inf(1))
		for _, v := range xs {
			want += float64(v)
			mx, mn = max(mx, v), min(mn, v)
		}
		got := x.Sum().Item()
		if d := math.Abs(float64(got) - want); d > 1e-6*math.Abs(want)+1e-3 {
			t.Errorf("Sum of %v = %v, want %v", shape, got, want)
		}
		if x.Max().Item() != mx || x.Min().Item() != mn {
			t.Errorf("Max/Min of %v = %v/%v, want %v/%v", shape, x.Max().Item(), x.Min().Item(), mx, mn)
		}
		// one dim at a time (the general path)
		step := x
		for step.Dim() > 0 {
			step = step.Sum(0)
		}
		if d := math.Abs(float64(got - step.Item())); d > 1e-6*math.Abs(want)+1e-3 {
			t.Errorf("Sum of %v = %v, dim by dim %v", shape, got, step.Item())
		}
		kd := x.SumKeepDim()
		if len(kd.Shape()) != len(shape) || kd.Numel() != 1 {
			t.Errorf("SumKeepDim of %v has shape %v", shape, kd.Shape())
		}
	}
	// a contiguous view that starts at an offset, and the gradient
	big := Randn(3, 300, 256).RequiresGrad()
	v := big.Narrow(0, 1, 2)
	var want float64
	for _, e := range v.Float32s() {
		want += float64(e)
	}
	s := v.Sum()
	if d := math.Abs(float64(s.Item()) - want); d > 1e-6*math.Abs(want)+1e-3 {
		t.Errorf("Sum of a narrowed view = %v, want %v", s.Item(), want)
	}
	s.Backward()
	g := big.Grad().Float32s()
	for i, e := range g {
		w := float32(0)
		if i >= 300*256 {
			w = 1
		}
		if e != w {
			t.Fatalf("grad[%d] = %v, want %v", i, e, w)
		}
	}
}
