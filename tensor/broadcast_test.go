package tensor_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"
)

var broadcastCases = []struct {
	a, b []int
	want []int // nil: must be rejected
}{
	// rejected
	{[]int{5, 2}, []int{5}, nil},
	{[]int{5, 7, 5, 1}, []int{1, 5, 1, 5}, nil},
	{[]int{3}, []int{4}, nil},
	{[]int{2, 3}, []int{3, 2}, nil},
	{[]int{2, 1, 3}, []int{4, 2}, nil},
	{[]int{0}, []int{2}, nil},
	// accepted
	{[]int{}, []int{}, []int{}},
	{[]int{}, []int{2, 3}, []int{2, 3}},
	{[]int{5, 1}, []int{5}, []int{5, 5}},
	{[]int{5, 2}, []int{2}, []int{5, 2}},
	{[]int{5, 2}, []int{1, 2}, []int{5, 2}},
	{[]int{5, 2}, []int{5, 1}, []int{5, 2}},
	{[]int{5, 7, 5, 1}, []int{1, 7, 1, 5}, []int{5, 7, 5, 5}},
	{[]int{8, 1, 6, 1}, []int{7, 1, 5}, []int{8, 7, 6, 5}},
	{[]int{1}, []int{3, 4}, []int{3, 4}},
	{[]int{3, 1}, []int{1, 4}, []int{3, 4}},
	{[]int{2, 1, 4}, []int{3, 1}, []int{2, 3, 4}},
	{[]int{0}, []int{1}, []int{0}},
	{[]int{2, 0}, []int{2, 1}, []int{2, 0}},
	{[]int{1, 1, 1}, []int{}, []int{1, 1, 1}},
}

func TestBroadcastShapes(t *testing.T) {
	for _, c := range broadcastCases {
		for _, swap := range []bool{false, true} {
			a, b := c.a, c.b
			if swap {
				a, b = b, a
			}
			got, ok := tensor.BroadcastShapes(a, b)
			if c.want == nil {
				if ok {
					t.Errorf("BroadcastShapes(%v, %v) = %v, want rejection", a, b, got)
				}
				continue
			}
			if !ok || !slices.Equal(got, c.want) {
				t.Errorf("BroadcastShapes(%v, %v) = %v, %v; want %v", a, b, got, ok, c.want)
			}
		}
	}
}

// TestBroadcastAdd checks the same rules through Add, and that the values
// are those of the naive definition out[i] = a[i mod-broadcast] + b[...].
func TestBroadcastAdd(t *testing.T) {
	for _, c := range broadcastCases {
		for _, swap := range []bool{false, true} {
			as, bs := c.a, c.b
			if swap {
				as, bs = bs, as
			}
			a := tensor.Arange(0, float32(numelOf(as)), 1).Reshape(as...)
			b := tensor.Arange(0, float32(numelOf(bs)), 1).MulScalar(100).Reshape(bs...)
			var out *tensor.Tensor
			err := tensor.Catch(func() { out = a.Add(b) })
			if c.want == nil {
				if err == nil {
					t.Errorf("Add(%v, %v) gave shape %v, want a panic", as, bs, out.Shape())
					continue
				}
				for _, s := range []string{"Add", fmt.Sprint(as), fmt.Sprint(bs)} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("Add(%v, %v): message %q does not mention %q", as, bs, err, s)
					}
				}
				continue
			}
			if err != nil {
				t.Errorf("Add(%v, %v): %v", as, bs, err)
				continue
			}
			if !slices.Equal(out.Shape(), c.want) {
				t.Errorf("Add(%v, %v) shape %v, want %v", as, bs, out.Shape(), c.want)
				continue
			}
			want := make([]float32, numelOf(c.want))
			av, bv := a.Float32s(), b.Float32s()
			for i := range want {
				idx := unravel(i, c.want)
				want[i] = av[broadcastIndex(idx, as)] + bv[broadcastIndex(idx, bs)]
			}
			if got := out.Float32s(); !slices.Equal(got, want) {
				t.Errorf("Add(%v, %v) = %v, want %v", as, bs, got, want)
			}
		}
	}
}

// TestBroadcastGradient checks that broadcasting is undone in backward: the
// gradient of a broadcast input is the sum over the broadcast dims.
func TestBroadcastGradient(t *testing.T) {
	a := tensor.Ones(3, 1).RequiresGrad()
	b := tensor.Arange(1, 5, 1).RequiresGrad() // [4]
	a.Mul(b).Sum().Backward()                  // [3 4]
	if got, want := a.Grad().Float32s(), []float32{10, 10, 10}; !slices.Equal(got, want) {
		t.Errorf("grad of the [3 1] input = %v, want %v", got, want)
	}
	if got, want := b.Grad().Float32s(), []float32{3, 3, 3, 3}; !slices.Equal(got, want) {
		t.Errorf("grad of the [4] input = %v, want %v", got, want)
	}
	if !slices.Equal(a.Grad().Shape(), []int{3, 1}) || !slices.Equal(b.Grad().Shape(), []int{4}) {
		t.Errorf("grad shapes %v and %v, want [3 1] and [4]", a.Grad().Shape(), b.Grad().Shape())
	}
}

func numelOf(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// unravel returns the row-major index of position i in shape.
func unravel(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = i % shape[d]
			i /= shape[d]
		}
	}
	return idx
}

// broadcastIndex returns the flat row-major position in a tensor of shape
// of the element that index idx (of the broadcast shape) reads.
func broadcastIndex(idx, shape []int) int {
	k := len(idx) - len(shape)
	pos := 0
	for d, n := range shape {
		i := idx[k+d]
		if n == 1 {
			i = 0
		}
		pos = pos*n + i
	}
	return pos
}
