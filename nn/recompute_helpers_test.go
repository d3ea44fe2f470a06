package nn

import (
	"math"
	"slices"
	"testing"

	"github.com/wickml/wick/tensor"
)

// stepGrads runs one forward and backward pass of m over the recompute
// tests' fixed batch (2 × 8 tokens of a 17-token vocabulary) and returns
// the loss and copies of the gradients of params; what names the run in
// a failure.
func stepGrads(t *testing.T, m CausalLM, params []*tensor.Tensor, what string) (float32, [][]float32) {
	t.Helper()
	idx := tensor.FromInts([]int{1, 5, 3, 16, 0, 2, 7, 7, 9, 11, 4, 4, 8, 1, 2, 3}, 2, 8)
	loss := m.Loss(idx, tensor.FromInts([]int{5, 3, 16, 0, 2, 7, 7, 9, 11, 4, 4, 8, 1, 2, 3, 6}, 2, 8))
	loss.Backward()
	grads := make([][]float32, 0, len(params))
	for _, p := range params {
		if p.Grad() == nil {
			t.Fatalf("%s: a parameter has no gradient", what)
		}
		grads = append(grads, slices.Clone(p.Grad().Float32s()))
	}
	return loss.Item(), grads
}

// sameStep fails t unless a run's loss and gradients (got) have the bits
// of the reference run's (want); name says which case and runs they are.
func sameStep(t *testing.T, name string, got, want float32, gotGrads, wantGrads [][]float32) {
	t.Helper()
	if math.Float32bits(got) != math.Float32bits(want) {
		t.Errorf("%s: loss %v, want %v", name, got, want)
	}
	if len(gotGrads) != len(wantGrads) {
		t.Fatalf("%s: %d gradients, want %d", name, len(gotGrads), len(wantGrads))
	}
	for i := range wantGrads {
		for j := range wantGrads[i] {
			if math.Float32bits(gotGrads[i][j]) != math.Float32bits(wantGrads[i][j]) {
				t.Fatalf("%s: gradient %d element %d is %v, want %v", name, i, j, gotGrads[i][j], wantGrads[i][j])
			}
		}
	}
}
