//go:build cuda

package cuda

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

// That this test binary runs at all on a machine without a GPU is the
// first check of cuinit.c: without it, gorgonia.org/cu's init exits the
// program before any test starts.

// TestCuInitInterposed checks that gorgonia.org/cu's cuInit call reached
// the interposed cuInit, whose record agrees with what the driver says
// now: initialised exactly when the driver's own cuInit succeeded.
func TestCuInitInterposed(t *testing.T) {
	t.Logf("driver cuInit result %d, CUDA version %d, %d devices", cuInitResult, DriverVersion(), DeviceCount())
	if cuInitResult == 0 {
		if initErr != nil {
			t.Fatalf("cuInit succeeded but initErr is %v", initErr)
		}
		if _, err := cu.NumDevices(); err != nil {
			t.Fatalf("cuInit succeeded but counting devices fails: %v", err)
		}
		return
	}
	if initErr == nil {
		t.Fatalf("cuInit returned %d but initErr is nil", cuInitResult)
	}
	// The driver was left uninitialised: gorgonia's calls fail instead
	// of exiting the program.
	if _, err := cu.NumDevices(); !errors.Is(err, cu.NotInitialized) {
		t.Errorf("after a failed cuInit, cu.NumDevices: got %v, want NotInitialized", err)
	}
}

// TestNoGPU checks, on a machine where the driver's cuInit failed (no GPU,
// or a broken driver), that every device request fails with an error that
// names cuInit's result, and that the CPU still works.
func TestNoGPU(t *testing.T) {
	if cuInitResult == 0 {
		t.Skip("the NVIDIA driver initialised (this machine has a GPU): the no-GPU path cannot be tested here; it runs on machines without a GPU (scripts/cuda_ci.sh)")
	}
	want := initErr.Error()
	if !strings.HasPrefix(want, "cuda: ") || !strings.Contains(want, "cuInit") {
		t.Fatalf("initErr %q should start with \"cuda: \" and name cuInit", want)
	}
	if Available() || DeviceCount() != 0 {
		t.Errorf("Available %v, DeviceCount %d; want false, 0", Available(), DeviceCount())
	}
	errs := deviceRequests()
	for name, err := range errs {
		if !errors.Is(err, initErr) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", name, err, want)
		}
	}
	_, err := tensor.BackendFor(tensor.CUDA(0))
	if !errors.Is(err, initErr) || err.Error() != "tensor: device cuda:0: "+want {
		t.Errorf("tensor.BackendFor(cuda:0): got %v, want %q", err, want)
	}
	if err := tensor.SetDefaultDevice(tensor.CUDA(0)); err == nil || tensor.DefaultDevice() != tensor.CPU {
		t.Errorf("SetDefaultDevice(cuda:0) without a usable GPU: got %v, default %s", err, tensor.DefaultDevice())
	}
	x := tensor.New([]float32{1, 2, 3, 4}, 2, 2)
	if got := x.MatMul(x).Sum().Item(); got != 54 {
		t.Errorf("CPU MatMul after a failed cuInit: sum %v, want 54", got)
	}
	t.Run("WICK_REQUIRE_GPU", testRequireGPU)
}

// testRequireGPU runs a GPU test of this binary in a child process, on
// this machine without a usable GPU: it must skip, and fail under
// WICK_REQUIRE_GPU=1 naming the switch, so that a device run cannot pass
// with its GPU tests skipped.
func testRequireGPU(t *testing.T) {
	run := func(require string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestBackend$", "-test.count", "1", "-test.v")
		cmd.Env = append(os.Environ(), "WICK_REQUIRE_GPU="+require)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("0")
	if err != nil || !strings.Contains(out, "--- SKIP: TestBackend") {
		t.Errorf("without WICK_REQUIRE_GPU: got %v, want TestBackend skipped; output:\n%s", err, out)
	}
	out, err = run("1")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(out, "--- FAIL: TestBackend") || !strings.Contains(out, "WICK_REQUIRE_GPU=1") {
		t.Errorf("with WICK_REQUIRE_GPU=1: got %v, want TestBackend failing and naming the switch; output:\n%s", err, out)
	}
}

// TestCuInitError checks the messages for the results of cuInit.
func TestCuInitError(t *testing.T) {
	if err := cuInitError(0); err != nil {
		t.Errorf("CUDA_SUCCESS: got %v, want nil", err)
	}
	cases := map[int]string{
		100: "cuda: the NVIDIA driver found no usable GPU (cuInit: CUDA_ERROR_NO_DEVICE)",
		35:  "(cuInit: CUDA_ERROR_INSUFFICIENT_DRIVER)",
		999: "is the nvidia kernel module loaded? try nvidia-smi) (cuInit: CUDA_ERROR_UNKNOWN)",
		3:   "(cuInit: CUDA_ERROR_NOT_INITIALIZED)",
		804: "does not support this GPU (cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)",
		304: "/dev/nvidia*?) (cuInit: CUDA_ERROR_OPERATING_SYSTEM)",
		803: "(cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)",
		// not among the explained results: the driver names it
		// (cuGetErrorName), or the number is shown
		2:      "cuda: the NVIDIA driver failed to initialise (cuInit: CUDA_ERROR_OUT_OF_MEMORY)",
		123456: "cuda: the NVIDIA driver failed to initialise (cuInit: CUresult 123456)",
		-1:     "cuda: the NVIDIA driver cannot be used: libcuda.so.1 has no cuInit (a broken driver installation?)",
	}
	for code, want := range cases {
		err := cuInitError(code)
		if err == nil || !strings.HasPrefix(err.Error(), "cuda: ") || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("cuInit result %d: got %v, want a message ending %q", code, err, want)
		}
	}
}
