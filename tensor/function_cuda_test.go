//go:build cuda

package tensor_test

import (
	"testing"

	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/tensor"
)

// TestFunctionCUDA runs the custom-function tests (GradCheck of Forward on
// raw slices and of several outputs) with the inputs on the GPU.
func TestFunctionCUDA(t *testing.T) {
	if !cuda.Available() {
		t.Skip("cuda: no usable GPU; the custom-function tests run on the CPU in TestFunction")
	}
	testFunctionOn(t, tensor.CUDA(0))
}
