//go:build cuda

// This file is the GPU build of package cuda's exported API. stub.go is
// the build without the cuda tag: keep the two in sync (same exported
// names and signatures, same documentation). api.go holds the
// declarations the two share.

package cuda

// #include "cuinit.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

// Built reports whether this binary was built with GPU support (the cuda
// build tag).
const Built = true

func init() {
	tensor.RegisterBackend(tensor.KindCUDA, func(i int) (tensor.Backend, error) {
		d, err := openDevice(i)
		if err != nil {
			return nil, err
		}
		return d.backend, nil
	})
}

// Available reports whether a CUDA device can be used: the binary was built
// with the cuda tag and the driver reports at least one GPU.
func Available() bool { return DeviceCount() > 0 }

// DeviceCount returns the number of CUDA devices (0 without GPU support).
func DeviceCount() int {
	if initErr != nil {
		return 0
	}
	n, err := cu.NumDevices()
	if err != nil {
		return 0
	}
	return n
}

// DeviceName returns the name of GPU i, such as "NVIDIA H200".
func DeviceName(i int) (string, error) {
	if err := checkIndex(i); err != nil {
		return "", err
	}
	dev, err := cu.GetDevice(i)
	if err != nil {
		return "", fmt.Errorf("cuda: device %d: %w", i, err)
	}
	name, err := dev.Name()
	if err != nil {
		return "", fmt.Errorf("cuda: device %d: %w", i, err)
	}
	return name, nil
}

// BLASLibrary opens GPU i if needed and returns the cuBLAS library its
// matrix products use: the file the dynamic loader found, such as
// "/usr/local/cuda/lib64/libcublas.so.12". cuBLAS is loaded at run time,
// trying $WICK_CUBLAS, then libcublas.so.13, .12, .11 through the loader's
// search path, then the same names in the NVIDIA wheels of a Python
// installation (site-packages/nvidia/cublas/lib, where pip puts PyTorch's
// CUDA libraries).
func BLASLibrary(i int) (string, error) {
	d, err := openDevice(i)
	if err != nil {
		return "", err
	}
	return d.blas.path, nil
}

// DriverVersion returns the CUDA version the driver supports, as
// 1000·major + 10·minor (0 without GPU support).
func DriverVersion() int { return max(cu.Version(), 0) }

// Open opens GPU i (its context, stream, kernels and cuBLAS) if it is not
// open yet and returns its tensor.Device. tensor.CUDA(i) devices are opened
// on first use anyway; Open reports the failure as an error instead.
func Open(i int) (tensor.Device, error) {
	dev := tensor.CUDA(i)
	if _, err := tensor.BackendFor(dev); err != nil {
		return tensor.Device{}, err
	}
	return dev, nil
}

// Memory returns the allocator counters of GPU i.
func Memory(i int) (MemoryStats, error) {
	d, err := openDevice(i)
	if err != nil {
		return MemoryStats{}, err
	}
	return d.alloc.Stats(), nil
}

// ResetPeak sets GPU i's Peak counter to the memory allocated now.
func ResetPeak(i int) error {
	d, err := openDevice(i)
	if err != nil {
		return err
	}
	d.alloc.resetPeak()
	return nil
}

// EmptyCache returns GPU i's cached (unused) memory to the driver, after
// a garbage collection has reclaimed the memory of unreachable tensors,
// like torch.cuda.empty_cache.
func EmptyCache(i int) error {
	d, err := openDevice(i)
	if err != nil {
		return err
	}
	defer d.enter()()
	d.alloc.collect()
	if err := d.alloc.emptyCache(); err != nil {
		return fmt.Errorf("cuda: EmptyCache on cuda:%d: %w", i, err)
	}
	return nil
}

// Synchronize waits until every operation queued on GPU i has finished.
// Reading a tensor to the host (Float32s, Item, String) synchronises by
// itself; Synchronize is for timing.
func Synchronize(i int) error {
	d, err := openDevice(i)
	if err != nil {
		return err
	}
	defer d.enter()()
	if err := d.stream.Synchronize(); err != nil {
		return fmt.Errorf("cuda: Synchronize on cuda:%d: %w", i, err)
	}
	return nil
}

var allowTF32 atomic.Bool

// SetAllowTF32 lets matrix products use TF32 tensor cores (about 10
// mantissa bits per product, several times faster on Ampere and later),
// like torch.backends.cuda.matmul.allow_tf32. It is off by default.
func SetAllowTF32(on bool) { allowTF32.Store(on) }

// AllowTF32 reports whether matrix products may use TF32.
func AllowTF32() bool { return allowTF32.Load() }

// device is one opened GPU.
type device struct {
	index   int
	name    string
	dev     cu.Device
	ctx     cu.CUContext
	stream  cu.Stream
	mod     cu.Module
	k       *kernels
	blas    *cublas
	alloc   *allocator
	backend *backend
	copies  atomic.Int64 // copies between host and device so far (for tests)
	staging staging      // pinned buffers for host-to-device copies
}

var (
	devicesMu sync.Mutex
	devices   = map[int]*device{}
)

var (
	// cuInitResult is what the driver's cuInit returned when gorgonia.org/cu
	// initialised it (0: CUDA_SUCCESS), or C.WICK_CUINIT_MISSING.
	cuInitResult = int(C.wick_cuinit_result())
	// initErr is why the NVIDIA driver cannot be used (nil when it
	// initialised): every device request returns it, and DeviceCount is 0.
	initErr = cuInitError(cuInitResult)
)

// cuInitError turns the result of the driver's cuInit, as kept by the
// interposed cuInit of cuinit.c, into an error that says why no GPU can be
// used; nil for CUDA_SUCCESS.
//
// gorgonia.org/cu exits the program in its init when cuInit fails;
// cuinit.c defines cuInit in the binary itself, so that gorgonia's call
// always succeeds and a binary built with the cuda tag starts (and runs
// on the CPU) on a machine with the driver but no GPU.
func cuInitError(code int) error {
	if code == 0 {
		return nil
	}
	if code == C.WICK_CUINIT_MISSING {
		return errors.New("cuda: the NVIDIA driver cannot be used: libcuda.so.1 has no cuInit (a broken driver installation?)")
	}
	if r, ok := cuInitResults[code]; ok {
		return fmt.Errorf("cuda: %s (cuInit: %s)", r.why, r.name)
	}
	name := fmt.Sprintf("CUresult %d", code)
	if n := C.wick_cu_error_name(C.int(code)); n != nil {
		name = C.GoString(n) // the driver's own name, such as CUDA_ERROR_OUT_OF_MEMORY
	}
	return fmt.Errorf("cuda: the NVIDIA driver failed to initialise (cuInit: %s)", name)
}

// cuInitResults are the common failures of cuInit: the driver's name of
// each and what it means, in words. (gorgonia.org/cu's names are of an
// unexported type that cannot be built from a number.)
var cuInitResults = map[int]struct{ name, why string }{
	3:   {"CUDA_ERROR_NOT_INITIALIZED", "the NVIDIA driver failed to initialise"},
	35:  {"CUDA_ERROR_INSUFFICIENT_DRIVER", "the NVIDIA driver is too old for its CUDA library libcuda.so.1"},
	100: {"CUDA_ERROR_NO_DEVICE", "the NVIDIA driver found no usable GPU"},
	304: {"CUDA_ERROR_OPERATING_SYSTEM", "the operating system refused the NVIDIA driver's request (can this user open /dev/nvidia*?)"},
	803: {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "the NVIDIA driver's kernel module and its libcuda.so.1 are different versions"},
	804: {"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "the CUDA forward-compatibility driver does not support this GPU"},
	999: {"CUDA_ERROR_UNKNOWN", "the NVIDIA driver failed to initialise with an unknown error (is the nvidia kernel module loaded? try nvidia-smi)"},
}

func checkIndex(i int) error {
	if initErr != nil {
		return initErr
	}
	n, err := cu.NumDevices()
	if err != nil {
		return fmt.Errorf("cuda: counting devices: %w", err)
	}
	if i < 0 || i >= n {
		return fmt.Errorf("cuda: no device cuda:%d (this machine has %d)", i, n)
	}
	return nil
}

// openDevice returns GPU i, opening it on first use: the primary context,
// one stream, the kernel module and a cuBLAS handle.
func openDevice(i int) (*device, error) {
	devicesMu.Lock()
	defer devicesMu.Unlock()
	if d, ok := devices[i]; ok {
		return d, nil
	}
	if err := checkIndex(i); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := &device{index: i}
	var err error
	if d.dev, err = cu.GetDevice(i); err != nil {
		return nil, fmt.Errorf("cuda: device %d: %w", i, err)
	}
	d.name, _ = d.dev.Name()
	if d.ctx, err = d.dev.RetainPrimaryCtx(); err != nil {
		return nil, fmt.Errorf("cuda: device %d: retaining the primary context: %w", i, err)
	}
	if err = cu.SetCurrentContext(d.ctx); err != nil {
		return nil, fmt.Errorf("cuda: device %d: setting the context: %w", i, err)
	}
	if d.stream, err = cu.MakeStream(cu.DefaultStream); err != nil {
		return nil, fmt.Errorf("cuda: device %d: creating a stream: %w", i, err)
	}
	if d.mod, d.k, err = loadKernels(); err != nil {
		return nil, fmt.Errorf("cuda: device %d (%s): %w", i, d.name, err)
	}
	if d.blas, err = loadCublas(d.stream); err != nil {
		return nil, fmt.Errorf("cuda: device %d: %w", i, err)
	}
	d.alloc = newAllocator(driverMem{d})
	d.backend = &backend{d: d}
	devices[i] = d
	return d, nil
}

// enter makes the device's context current on this goroutine's thread and
// pins the goroutine to it; call the returned function when done (defer
// d.enter()()).
func (d *device) enter() func() {
	runtime.LockOSThread()
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		runtime.UnlockOSThread()
		d.fail("enter", "setting the context", err)
	}
	return runtime.UnlockOSThread
}

// fail panics with an *Error for op.
func (d *device) fail(op, what string, err error) {
	panic(&Error{Op: op, Device: d.index, Err: fmt.Errorf("%s: %w", what, err)})
}
