// This file holds the declarations of package cuda's exported API that are
// the same in the GPU build (cuda.go) and the build without the cuda tag
// (stub.go): the errors and the allocator's counters. It has no build
// constraint, so there is one copy of each.

package cuda

import (
	"errors"
	"fmt"
)

// ErrNotBuilt is the error of every device request in a binary built
// without the cuda tag.
var ErrNotBuilt = errors.New("this binary was built without GPU support (rebuild with -tags cuda on a machine with the NVIDIA driver)")

// Error is the value the CUDA backend panics with when the device fails an
// operation: a failed kernel launch, out of memory, a failed copy. (Shapes
// and dtypes are checked by package tensor before any kernel runs; such
// mistakes panic with a *tensor.Error.)
type Error struct {
	Op     string // the operation, such as "MatMul"
	Device int    // the GPU index
	Err    error  // what the driver or cuBLAS reported
}

// Error returns the message "cuda: Op on cuda:Device: Err".
func (e *Error) Error() string { return fmt.Sprintf("cuda: %s on cuda:%d: %v", e.Op, e.Device, e.Err) }

// Unwrap returns the underlying driver or cuBLAS error.
func (e *Error) Unwrap() error { return e.Err }

// MemoryStats are the counters of a device's caching allocator, in bytes.
type MemoryStats struct {
	// Allocated is the memory held by live storages (rounded up to the
	// allocator's block sizes), like torch.cuda.memory_allocated.
	Allocated int64
	// Reserved is the memory taken from the driver: allocated plus cached
	// for reuse, like torch.cuda.memory_reserved.
	Reserved int64
	// Peak is the largest Allocated since the device was opened or since
	// ResetPeak.
	Peak int64
}
