//go:build !cuda

package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestStub checks the build without the cuda tag: no device, and every
// request for one fails with an error that says how to build with GPU
// support, from this package and from package tensor alike.
func TestStub(t *testing.T) {
	if Built || Available() || DeviceCount() != 0 || DriverVersion() != 0 || AllowTF32() {
		t.Fatalf("stub: Built %v, Available %v, DeviceCount %d", Built, Available(), DeviceCount())
	}
	SetAllowTF32(true)
	if AllowTF32() {
		t.Error("the stub cannot allow TF32")
	}
	const hint = "rebuild with -tags cuda"
	errs := deviceRequests()
	x := tensor.Zeros(4)
	errs["RandUniform"] = RandUniform(x, 1, 0)
	errs["RandNormal"] = RandNormal(x, 1, 0)
	errs["DropoutMask"] = DropoutMask(x, 0.5, 1, 0)
	for name, err := range errs {
		if !errors.Is(err, ErrNotBuilt) || !strings.Contains(err.Error(), hint) {
			t.Errorf("%s: got %v, want ErrNotBuilt saying %q", name, err, hint)
		}
	}
	if err := errs["Memory"]; !strings.Contains(err.Error(), "cuda:1") {
		t.Errorf("the error should name the device: %v", err)
	}
	_, err := tensor.BackendFor(tensor.CUDA(0))
	if err == nil || !strings.Contains(err.Error(), hint) {
		t.Errorf("tensor.BackendFor(cuda:0): got %v, want an error saying %q", err, hint)
	}
	if err := tensor.SetDefaultDevice(tensor.CUDA(0)); err == nil || tensor.DefaultDevice() != tensor.CPU {
		t.Errorf("SetDefaultDevice(cuda:0) without GPU support: got %v, default %s", err, tensor.DefaultDevice())
	}
	e := &Error{Op: "MatMul", Device: 2, Err: errors.New("boom")}
	if e.Error() != "cuda: MatMul on cuda:2: boom" || errors.Unwrap(e).Error() != "boom" {
		t.Errorf("Error: %q", e.Error())
	}
}
