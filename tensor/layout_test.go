package tensor

import (
	"fmt"
	"testing"
)

// TestShapeString checks the fmt-free shape formatting against fmt.Sprint.
func TestShapeString(t *testing.T) {
	for _, s := range [][]int{nil, {}, {0}, {3}, {2, 3}, {1, 10, 100, 1000}, {-1, 7}} {
		if got, want := shapeString(s), fmt.Sprint(s); got != want {
			t.Errorf("shapeString(%#v) = %q, want %q", s, got, want)
		}
	}
}

// TestLayoutOffsets checks Offsets on a scalar, an empty layout, a
// contiguous one, a transposed view with an offset, a broadcast (stride 0)
// and a negative stride, against the offsets written out by hand.
func TestLayoutOffsets(t *testing.T) {
	for _, c := range []struct {
		l    Layout
		want []int
	}{
		{Layout{Shape: []int{}, Strides: []int{}, Offset: 4}, []int{4}},
		{Layout{Shape: []int{2, 0}, Strides: []int{0, 1}}, []int{}},
		{Layout{Shape: []int{2, 3}, Strides: []int{3, 1}}, []int{0, 1, 2, 3, 4, 5}},
		{Layout{Shape: []int{3, 2}, Strides: []int{1, 3}, Offset: 1}, []int{1, 4, 2, 5, 3, 6}},
		{Layout{Shape: []int{2, 3}, Strides: []int{0, 1}, Offset: 2}, []int{2, 3, 4, 2, 3, 4}},
		{Layout{Shape: []int{2, 2}, Strides: []int{2, -1}, Offset: 1}, []int{1, 0, 3, 2}},
	} {
		got := c.l.Offsets()
		if fmt.Sprint(got) != fmt.Sprint(c.want) || len(got) != len(c.want) {
			t.Errorf("%+v.Offsets() = %v, want %v", c.l, got, c.want)
		}
	}
}
