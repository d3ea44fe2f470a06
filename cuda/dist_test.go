//go:build cuda

package cuda

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/wickml/wick/tensor"
)

// TestDevicePointer checks the hooks that hand tensors to CUDA libraries
// (dist's NCCL): a view's address is its storage's plus its offset, the
// stream is the device's, and tensors that are not contiguous GPU tensors
// are refused with an error that says why.
func TestDevicePointer(t *testing.T) {
	gpu(t)
	dev := tensor.CUDA(0)
	x := tensor.Arange(0, 12, 1).To(dev).Reshape(3, 4)
	base, i, err := DevicePointer(x)
	if err != nil || base == 0 || i != 0 {
		t.Fatalf("DevicePointer of a GPU tensor: %#x, device %d, %v", base, i, err)
	}
	row, _, err := DevicePointer(x.Narrow(0, 1, 2))
	if err != nil || row != base+4*4 {
		t.Fatalf("DevicePointer of rows 1-2: %#x, %v; want the base %#x + 16 bytes", row, err, base)
	}
	if p, _, err := DevicePointer(tensor.Zeros(0).To(dev)); err != nil || p != 0 {
		t.Fatalf("DevicePointer of an empty tensor: %#x, %v; want 0", p, err)
	}
	for name, c := range map[string]struct {
		x    *tensor.Tensor
		want string
	}{
		"cpu":        {tensor.Zeros(3), "not on a GPU"},
		"transposed": {x.T(), "not contiguous"},
		"nil":        {nil, "nil tensor"},
	} {
		if _, _, err := DevicePointer(c.x); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DevicePointer of a %s tensor: %v, want an error saying %q", name, err, c.want)
		}
	}
	s, err := Stream(0)
	d, _ := openDevice(0)
	if err != nil || s == 0 || s != uintptr(unsafe.Pointer(d.stream.C())) {
		t.Fatalf("Stream(0) = %#x, %v", s, err)
	}
	ran := false
	if err := WithDevice(0, func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("WithDevice(0): ran %v, %v", ran, err)
	}
	if _, err := Stream(99); err == nil || !strings.Contains(err.Error(), "cuda:99") {
		t.Errorf("Stream(99): %v, want an error naming cuda:99", err)
	}
}
