//go:build cuda

package nn_test

import (
	"testing"

	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/tensor"
)

// TestLossesCUDA replays the loss goldens (forward and gradients) on the
// GPU.
func TestLossesCUDA(t *testing.T) {
	if !cuda.Available() {
		t.Skip("cuda: no usable GPU; the loss goldens run on the CPU in TestLossesMatchPyTorch")
	}
	testLossesOn(t, tensor.CUDA(0))
}
