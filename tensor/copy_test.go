package tensor_test

import (
	"slices"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestCopyFromOverlapping copies between overlapping views of one tensor:
// the result is as if the source were read in full before the destination
// is written, whatever order the backend walks the elements in.
func TestCopyFromOverlapping(t *testing.T) {
	x := tensor.Arange(0, 10, 1)
	x.Narrow(0, 1, 9).CopyFrom(x.Narrow(0, 0, 9)) // shift right by one
	if got, want := x.Float32s(), []float32{0, 0, 1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(got, want) {
		t.Errorf("shift right: got %v, want %v", got, want)
	}
	x = tensor.Arange(0, 10, 1)
	x.Narrow(0, 0, 9).CopyFrom(x.Narrow(0, 1, 9)) // shift left by one
	if got, want := x.Float32s(), []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 9}; !slices.Equal(got, want) {
		t.Errorf("shift left: got %v, want %v", got, want)
	}
	m := tensor.Arange(0, 9, 1).Reshape(3, 3)
	m.CopyFrom(m.T()) // a matrix into its own transpose
	if got, want := m.Float32s(), []float32{0, 3, 6, 1, 4, 7, 2, 5, 8}; !slices.Equal(got, want) {
		t.Errorf("transpose in place: got %v, want %v", got, want)
	}
}
