//go:build cuda

package cuda

import (
	"fmt"
	"runtime"
	"weak"

	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

// driverMem is a device's memory as the allocator sees it (devMem).
type driverMem struct{ d *device }

func (m driverMem) alloc(size int64) (uintptr, error) {
	p, err := cu.MemAlloc(size)
	if err == cu.OutOfMemory {
		return 0, fmt.Errorf("cuMemAlloc: %w", errOutOfMemory)
	}
	return uintptr(p), err
}

func (m driverMem) free(ptr uintptr) error { return cu.MemFree(cu.DevicePtr(ptr)) }

func (m driverMem) sync() error { return m.d.stream.Synchronize() }

// elemSize is the size of one element of dt in bytes (tensor's dtype
// table; it panics for a value that is not a dtype).
func elemSize(dt tensor.DType) int64 { return int64(dt.ItemSize()) }

// storage is device memory holding n elements of one dtype. It implements
// tensor.Storage.
type storage struct {
	d  *device
	l  *lease // nil for an empty storage
	dt tensor.DType
	n  int
}

var _ tensor.Storage = (*storage)(nil)

// newStorage returns a storage of n elements of dt backed by a block (no
// block when n is 0), registered for release when it becomes unreachable.
// Its contents are undefined. The caller holds the device context.
func (d *device) newStorage(op string, dt tensor.DType, n int) *storage {
	// the tensor package has checked the storages it asks for, with the
	// op's shapes; this covers the backend's own (copies, workspaces)
	tensor.CheckAlloc(op, dt, n)
	s := &storage{d: d, dt: dt, n: n}
	if n == 0 {
		return s
	}
	blk, err := d.alloc.block(int64(n) * elemSize(dt))
	if err != nil {
		d.fail(op, "device memory", err)
	}
	s.l = &lease{blk: blk}
	w := weak.Make(s)
	d.alloc.track(s.l, func() bool { return w.Value() != nil })
	runtime.AddCleanup(s, d.alloc.release, s.l)
	return s
}

// Device returns the GPU the storage lives on.
func (s *storage) Device() tensor.Device { return tensor.CUDA(s.d.index) }

// DType returns the element type.
func (s *storage) DType() tensor.DType { return s.dt }

// Len returns the number of elements.
func (s *storage) Len() int { return s.n }

// Release returns the storage's memory to the allocator's cache now, rather
// than when the garbage collector finds the storage unreachable. Using the
// storage afterwards (through any tensor that views it) panics.
func (s *storage) Release() {
	if s.l != nil {
		s.d.alloc.release(s.l)
	}
}

// ptr returns the device address of element off, panicking with op's name
// if the storage was released.
func (s *storage) ptr(op string, off int) cu.DevicePtr {
	if s.l == nil {
		return 0
	}
	if s.l.done.Load() {
		panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("use of a released %s storage of %d elements on %s", s.dt, s.n, s.Device())})
	}
	return cu.DevicePtr(s.l.blk.ptr + uintptr(int64(off)*elemSize(s.dt)))
}
