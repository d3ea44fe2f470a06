//go:build cuda

package cuda

import (
	"testing"

	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tensor/backendtest"
)

// TestReducePlansCovered checks that the shapes of the suite's Reduce check
// (run by TestBackend) reach all three reduction kernels of planReduce: one
// thread per output for short reduced dims, one block per output for long
// contiguous lines, split into tiles and chunks otherwise.
func TestReducePlansCovered(t *testing.T) {
	used := map[int]bool{}
	for _, shape := range backendtest.ReduceShapes {
		st := tensor.ContiguousStrides(shape)
		for dim := range shape {
			nout := 1
			for d, s := range shape {
				if d != dim {
					nout *= s
				}
			}
			used[planReduce(max(nout, 1), shape[dim], st[dim], false).kind] = true
		}
	}
	if !used[reduceThread] || !used[reduceBlock] || !used[reduceSplit] {
		t.Errorf("the suite's Reduce shapes should exercise all three reduction kernels (used %v)", used)
	}
}
