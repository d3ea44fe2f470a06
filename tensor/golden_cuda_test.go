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

// TestGolden16CUDA replays the bfloat16 and float16 golden cases
// (PyTorch's 16-bit results, forward and backward) on the GPU, with
// TestGolden16's tolerances: the 16-bit kernels where the CUDA backend has
// them (casts, elementwise ops, Where, MatMul through cuBLAS GemmEx,
// Embedding), the float32 kernels on widened values for the rest
// (compute16.go).
func TestGolden16CUDA(t *testing.T) {
	if !cuda.Available() {
		if os.Getenv("WICK_REQUIRE_GPU") == "1" {
			t.Fatal("cuda: no usable GPU (WICK_REQUIRE_GPU=1: a missing GPU fails the test)")
		}
		t.Skip("cuda: no usable GPU; the 16-bit golden cases run on the CPU in TestGolden16")
	}
	if _, err := cuda.Open(0); err != nil {
		if os.Getenv("WICK_REQUIRE_GPU") == "1" {
			t.Fatalf("%v (WICK_REQUIRE_GPU=1: a missing GPU or CUDA library fails the test)", err)
		}
		t.Skipf("%v; the 16-bit golden cases run on the CPU in TestGolden16", err)
	}
	if err := tensor.SetDefaultDevice(tensor.CUDA(0)); err != nil {
		t.Fatal(err)
	}
	defer tensor.SetDefaultDevice(tensor.CPU)
	for _, f := range loadGolden16(t) {
		t.Run(f.dt.String(), func(t *testing.T) {
			for i := range f.cases {
				c := &f.cases[i]
				t.Run(c.Name, func(t *testing.T) { runGolden16Case(t, f.dt, c) })
			}
		})
	}
}
