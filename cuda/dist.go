//go:build cuda

package cuda

// The hooks of this file let a CUDA library that works on device memory,
// such as NCCL (package dist, -tags cuda,mpi), run on Wick's tensors: the
// address of a tensor's elements, the GPU's compute stream, and the GPU's
// context current on the calling thread. dist_stub.go is their build
// without the cuda tag: keep the two in sync.

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/wickml/wick/tensor"
)

// DevicePointer returns the device address of the first element of t, a
// contiguous tensor on a GPU, and that GPU's index, so that a CUDA library
// (NCCL, a kernel of one's own) can read or write t in place. Work the
// library queues on the GPU's compute stream (Stream) runs in order with
// Wick's own operations. The address is valid while t (or another view of
// its storage) is reachable: keep t alive (runtime.KeepAlive) until the
// work that uses the address has been queued. A tensor of no elements has
// address 0.
//
// DevicePointer returns an error if t is nil, not on a GPU or not
// contiguous. It panics if t's storage was released (Storage.Release).
func DevicePointer(t *tensor.Tensor) (ptr uintptr, device int, err error) {
	if t == nil {
		return 0, 0, fmt.Errorf("cuda: DevicePointer of a nil tensor")
	}
	s, ok := t.Storage().(*storage)
	if !ok {
		return 0, 0, fmt.Errorf("cuda: DevicePointer: the tensor of shape %v is on %s, not on a GPU", t.Shape(), t.Device())
	}
	if !t.IsContiguous() {
		return 0, 0, fmt.Errorf("cuda: DevicePointer: the tensor of shape %v and strides %v on %s is not contiguous", t.Shape(), t.Strides(), t.Device())
	}
	if t.Numel() == 0 {
		return 0, s.d.index, nil
	}
	p := s.ptr("DevicePointer", t.Offset())
	runtime.KeepAlive(s)
	return uintptr(p), s.d.index, nil
}

// Stream returns the handle (a CUstream) of GPU i's compute stream, on
// which every operation on the GPU's tensors is queued, opening the GPU if
// it is not open yet.
func Stream(i int) (uintptr, error) {
	d, err := openDevice(i)
	if err != nil {
		return 0, err
	}
	return uintptr(unsafe.Pointer(d.stream.C())), nil
}

// WithDevice opens GPU i if needed and runs f on an OS thread that has
// the GPU's context current (the goroutine stays on that thread until f
// returns), so that f may call a CUDA library that works in the current
// context, such as NCCL. It returns f's error.
func WithDevice(i int, f func() error) error {
	d, err := openDevice(i)
	if err != nil {
		return err
	}
	defer d.enter()()
	return f()
}
