//go:build !cuda

package cuda

import (
	"errors"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestDevicePointerStub checks that the hooks for CUDA libraries fail with
// ErrNotBuilt without the cuda tag.
func TestDevicePointerStub(t *testing.T) {
	_, _, e1 := DevicePointer(tensor.Zeros(2))
	_, e2 := Stream(0)
	e3 := WithDevice(0, func() error { t.Error("WithDevice ran f without GPU support"); return nil })
	for i, err := range []error{e1, e2, e3} {
		if !errors.Is(err, ErrNotBuilt) {
			t.Errorf("hook %d: %v, want ErrNotBuilt", i, err)
		}
	}
	if _, _, err := DevicePointer(nil); err == nil {
		t.Error("DevicePointer(nil) without GPU support: no error")
	}
}
