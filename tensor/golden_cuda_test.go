//go:build cuda

package tensor_test

import (
	"os"
	"testing"

	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/tensor"
)

// TestGoldenCUDA replays the PyTorch golden cases (every op of the tensor
// surface, forward and backward, on strided, broadcast, empty and 0-d
// inputs) on the GPU.
func TestGoldenCUDA(t *testing.T) {
	if !cuda.Available() {
		if os.Getenv("WICK_REQUIRE_GPU") == "1" {
			t.Fatal("cuda: no usable GPU (WICK_REQUIRE_GPU=1: a missing GPU fails the test)")
		}
		t.Skip("cuda: no usable GPU; the golden cases run on the CPU in TestGolden")
	}
	if _, err := cuda.Open(0); err != nil {
		if os.Getenv("WICK_REQUIRE_GPU") == "1" {
			t.Fatalf("%v (WICK_REQUIRE_GPU=1: a missing GPU or CUDA library fails the test)", err)
		}
		t.Skipf("%v; the golden cases run on the CPU in TestGolden", err)
	}
	testGoldenOn(t, tensor.CUDA(0))
}
