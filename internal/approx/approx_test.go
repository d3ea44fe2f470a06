package approx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder is a testing.TB that keeps what Errorf reports.
type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

func TestIndex(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	cases := []struct {
		got, want  []float32
		rtol, atol float64
		idx        int
	}{
		{[]float32{1, 2, 3}, []float32{1, 2, 3}, 0, 0, -1},
		{[]float32{1, 2.00001, 3}, []float32{1, 2, 3}, 1e-5, 0, -1},
		{[]float32{1, 2.0001, 3}, []float32{1, 2, 3}, 1e-5, 0, 1},
		// Relative to the smaller magnitude: 1e-5 of 1 does not cover 1.1e-5.
		{[]float32{0, 1.000011}, []float32{0, 1}, 1e-5, 0, 1},
		// Near zero only atol helps.
		{[]float32{1e-7}, []float32{0}, 1e-5, 0, 0},
		{[]float32{1e-7}, []float32{0}, 1e-5, 1e-6, -1},
		// NaN equals NaN, infinities only themselves.
		{[]float32{nan, inf}, []float32{nan, inf}, 1e-5, 1e-6, -1},
		{[]float32{1, nan}, []float32{1, 1}, 1, 1, 1},
		{[]float32{inf}, []float32{3e38}, 1, 1e39, 0},
		{[]float32{-inf}, []float32{inf}, 1, 1, 0},
		// Lengths.
		{[]float32{1}, []float32{1, 2}, 0, 0, 1},
		{[]float32{1, 2, 3}, []float32{1, 2}, 0, 0, 2},
	}
	for _, c := range cases {
		if i := Index(c.got, c.want, c.rtol, c.atol); i != c.idx {
			t.Errorf("Index(%v, %v, %g, %g) = %d, want %d", c.got, c.want, c.rtol, c.atol, i, c.idx)
		}
	}
	// A float64 reference is not rounded to float32: 0.1 is not float32(0.1).
	if i := Index([]float32{0.1}, []float64{0.1}, 0, 1e-10); i != 0 {
		t.Errorf("Index(float32 0.1, float64 0.1, atol 1e-10) = %d, want 0", i)
	}
}

func TestEqualReports(t *testing.T) {
	r := &recorder{TB: t}
	if Equal(r, "x", []float32{1, 2, 4, 5}, []float32{1, 2, 3, 4}, 1e-5, 1e-6) {
		t.Fatal("Equal = true for different slices")
	}
	if len(r.msgs) != 1 {
		t.Fatalf("%d messages, want 1: %q", len(r.msgs), r.msgs)
	}
	for _, s := range []string{"x: element 2", "got 4", "want 3", "atol 1e-06", "rtol 1e-05", "2 of 4 elements differ"} {
		if !strings.Contains(r.msgs[0], s) {
			t.Errorf("message %q lacks %q", r.msgs[0], s)
		}
	}
	r.msgs = nil
	if !Equal(r, "x", []float32{1, 2}, []float32{1, 2}, 0, 0) || len(r.msgs) != 0 {
		t.Errorf("Equal failed equal slices: %q", r.msgs)
	}
	if Equal(r, "x", []float32{1}, []float32{1, 2}, 0, 0) || !strings.Contains(r.msgs[0], "1 elements, want 2") {
		t.Errorf("Equal on lengths 1 and 2: %q", r.msgs)
	}
}

type fakeTensor struct {
	shape []int
	data  []float32
}

func (f fakeTensor) Shape() []int        { return f.shape }
func (f fakeTensor) Float32s() []float32 { return f.data }

func TestEqualTensorShape(t *testing.T) {
	r := &recorder{TB: t}
	a := fakeTensor{[]int{2, 2}, []float32{1, 2, 3, 4}}
	b := fakeTensor{[]int{4}, []float32{1, 2, 3, 4}}
	if EqualTensor(r, "t", a, b, 0, 0) || !strings.Contains(r.msgs[0], "shape [2 2], want [4]") {
		t.Errorf("EqualTensor on shapes [2 2] and [4]: %q", r.msgs)
	}
	if !EqualTensor(r, "t", a, a, 0, 0) {
		t.Errorf("EqualTensor failed equal tensors")
	}
}

func TestEqualScalar(t *testing.T) {
	r := &recorder{TB: t}
	if !EqualScalar(r, "s", 100.0005, 100, 1e-5, 0) {
		t.Errorf("EqualScalar(100.0005, 100, 1e-5) failed: %q", r.msgs)
	}
	if EqualScalar(r, "s", 100.01, 100, 1e-5, 0) || !strings.Contains(r.msgs[0], "s: got 100.01, want 100") {
		t.Errorf("EqualScalar(100.01, 100, 1e-5): %q", r.msgs)
	}
}

// TestWithinIsEquateApprox checks that within gives go-cmp's verdict on
// random pairs near each other and on the special values.
func TestWithinIsEquateApprox(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 1e-38, 1, -1, 3.4e38, -3.4e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	tols := [][2]float64{{0, 0}, {1e-5, 0}, {1e-5, 1e-6}, {1e-4, 1e-5}, {0, 1e-3}, {0.5, 2}}
	g := rand.New(rand.NewPCG(1, 2))
	for _, tol := range tols {
		opt := Options(tol[0], tol[1])
		check := func(x, y float32) {
			if w, c := within(float64(x), float64(y), tol[0], tol[1]), cmp.Equal(x, y, opt); w != c {
				t.Fatalf("within(%g, %g, %g, %g) = %v, go-cmp says %v", x, y, tol[0], tol[1], w, c)
			}
		}
		for _, x := range special {
			for _, y := range special {
				check(x, y)
			}
		}
		for range 2000 {
			x := float32(g.NormFloat64() * math.Pow(10, float64(g.IntN(9)-4)))
			rel := math.Pow(10, -float64(g.IntN(8)))
			y := x * float32(1+rel*g.NormFloat64())
			if g.IntN(4) == 0 {
				y = x + float32(g.NormFloat64()*tol[1])
			}
			check(x, y)
			check(y, x)
		}
	}
}

func BenchmarkIndex(b *testing.B) {
	x := make([]float32, 1<<16)
	y := make([]float32, len(x))
	for i := range x {
		x[i] = float32(i)
		y[i] = x[i] * (1 + 1e-6)
	}
	for b.Loop() {
		Index(x, y, 1e-5, 1e-6)
	}
}
