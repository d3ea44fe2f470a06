package parallel

import (
	"sync/atomic"
	"testing"
)

// TestEach checks that Each calls f once for every index, also for more
// indices than processors, and none for n ≤ 0.
func TestEach(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 2, 7, 100} {
		counts := make([]atomic.Int32, max(n, 0))
		Each(n, func(i int) { counts[i].Add(1) })
		for i := range counts {
			if c := counts[i].Load(); c != 1 {
				t.Errorf("n=%d: f(%d) ran %d times, want 1", n, i, c)
			}
		}
	}
}

// TestEachPanic checks that a panic in f reaches the caller.
func TestEachPanic(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want boom", r)
		}
	}()
	Each(8, func(i int) {
		if i == 3 {
			panic("boom")
		}
	})
	t.Error("Each returned after a panic in f")
}
