//go:build cuda

package tensor_test

import (
	"testing"

	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/tensor"
)

// TestGoldenCUDA replays the PyTorch golden cases (every op of the tensor
// surface, forward and backward, on strided, broadcast, empty and 0-d
// inputs) on the GPU.
func TestGoldenCUDA(t *testing.T) {
	if !cuda.Available() {
		t.Skip("cuda: no usable GPU; the golden cases run on the CPU in TestGolden")
	}
	testGoldenOn(t, tensor.CUDA(0))
}
