package tensor

import (
	"math"
	"testing"

	"github.com/wickml/wick/internal/approx"
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
		if !approx.Scalar(float64(got), want, 1e-6, 1e-3) {
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
		if !approx.Scalar(float64(got), float64(step.Item()), 1e-6, 1e-3) {
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
	if !approx.Scalar(float64(s.Item()), want, 1e-6, 1e-3) {
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

// TestReduceRowsFast checks sums over a leading or middle dimension (rows
// added into float64 accumulators) against the per-line reference bit for
// bit, with runs longer than the accumulator block and split across
// workers, views at an offset, transposed and broadcast inputs.
func TestReduceRowsFast(t *testing.T) {
	defer func(f bool) { reduceRowsFast = f }(reduceRowsFast)
	ManualSeed(11)
	type tc struct {
		x   *Tensor
		dim int
	}
	var cases []tc
	for _, shape := range [][]int{{64, 256}, {3, 1000}, {7, 5, 300}, {1, 9}, {0, 4}, {40000, 2}, {300, 700}} {
		x := Randn(shape...)
		for d := range shape {
			cases = append(cases, tc{x, d})
		}
	}
	wide := Randn(3, 300, 257)
	cases = append(cases,
		tc{wide.Narrow(1, 3, 200), 0},
		tc{wide.Narrow(2, 1, 256), 1},
		tc{wide.Transpose(0, 2), 1},
		tc{Randn(1, 513).Expand(6, 513), 0})
	for _, c := range cases {
		reduceRowsFast = false
		want := c.x.Sum(c.dim).Float32s()
		reduceRowsFast = true
		got := c.x.Sum(c.dim).Float32s()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("Sum(%d) of %v (strides %v): [%d] = %v, want %v", c.dim, c.x.Shape(), c.x.Strides(), i, got[i], want[i])
			}
		}
	}
}

// BenchmarkSumRows sums a GPT layer's [768, 512] gradient over its rows (a
// bias gradient), with the row-wise accumulation and with the per-line
// reference.
func BenchmarkSumRows(b *testing.B) {
	NoPoison(b)
	defer func(f bool) { reduceRowsFast = f }(reduceRowsFast)
	ManualSeed(1)
	x := Randn(768, 512)
	for _, fast := range []bool{true, false} {
		b.Run(map[bool]string{true: "rows", false: "lines"}[fast], func(b *testing.B) {
			reduceRowsFast = fast
			for b.Loop() {
				x.Sum(0)
			}
		})
	}
}
