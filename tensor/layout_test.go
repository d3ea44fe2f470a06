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
