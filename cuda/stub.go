//go:build !cuda

// This file is package cuda's exported API in a build without the cuda
// tag: nothing is registered with package tensor and every device request
// fails with ErrNotBuilt. cuda.go is the GPU build: keep the two in sync
// (same exported names and signatures, same documentation). api.go
// holds the declarations the two share.

package cuda

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// Built reports whether this binary was built with GPU support (the cuda
// build tag).
const Built = false

func notBuilt(i int) error {
	return fmt.Errorf("cuda: device %s is not available: %w", tensor.CUDA(i), ErrNotBuilt)
}

// Available reports whether a CUDA device can be used: the binary was built
// with the cuda tag and the driver reports at least one GPU.
func Available() bool { return false }

// DeviceCount returns the number of CUDA devices (0 without GPU support).
func DeviceCount() int { return 0 }

// DeviceName returns the name of GPU i, such as "NVIDIA H200".
func DeviceName(i int) (string, error) { return "", notBuilt(i) }

// BLASLibrary opens GPU i if needed and returns the cuBLAS library its
// matrix products use: the file the dynamic loader found, such as
// "/usr/local/cuda/lib64/libcublas.so.12". cuBLAS is loaded at run time,
// trying $WICK_CUBLAS, then libcublas.so.13, .12, .11 through the loader's
// search path, then the same names in the NVIDIA wheels of a Python
// installation (site-packages/nvidia/cublas/lib, where pip puts PyTorch's
// CUDA libraries).
func BLASLibrary(i int) (string, error) { return "", notBuilt(i) }

// DriverVersion returns the CUDA version the driver supports, as
// 1000·major + 10·minor (0 without GPU support).
func DriverVersion() int { return 0 }

// Open opens GPU i (its context, stream, kernels and cuBLAS) if it is not
// open yet and returns its tensor.Device. tensor.CUDA(i) devices are opened
// on first use anyway; Open reports the failure as an error instead.
func Open(i int) (tensor.Device, error) { return tensor.Device{}, notBuilt(i) }

// Memory returns the allocator counters of GPU i.
func Memory(i int) (MemoryStats, error) { return MemoryStats{}, notBuilt(i) }

// ResetPeak sets GPU i's Peak counter to the memory allocated now.
func ResetPeak(i int) error { return notBuilt(i) }

// EmptyCache returns GPU i's cached (unused) memory to the driver, after
// a garbage collection has reclaimed the memory of unreachable tensors,
// like torch.cuda.empty_cache.
func EmptyCache(i int) error { return notBuilt(i) }

// Synchronize waits until every operation queued on GPU i has finished.
// Reading a tensor to the host (Float32s, Item, String) synchronises by
// itself; Synchronize is for timing.
func Synchronize(i int) error { return notBuilt(i) }

// SetAllowTF32 lets matrix products use TF32 tensor cores (about 10
// mantissa bits per product, several times faster on Ampere and later),
// like torch.backends.cuda.matmul.allow_tf32. It is off by default.
func SetAllowTF32(on bool) {}

// AllowTF32 reports whether matrix products may use TF32.
func AllowTF32() bool { return false }

// RandUniform fills the contiguous float32 tensor t on a GPU in place with
// numbers uniform in [0, 1), drawn on the device by the counter-based
// Philox4x32-10 generator (csrc/random.cu): the result depends only on
// seed, offset and the element index, so use a new offset (or seed) for
// each independent draw. It returns an error only when t's device cannot
// be used; a tensor that is not a contiguous float32 tensor on a GPU is a
// programmer error and panics.
//
// tensor.Rand and tensor.Randn draw on the host from the global generator
// (so that a seed gives the same numbers on every device); these functions
// are the fast path for code that wants device-side draws.
func RandUniform(t *tensor.Tensor, seed, offset uint64) error { return notBuilt(0) }

// RandNormal is RandUniform for standard normal numbers (Box-Muller on
// Philox words).
func RandNormal(t *tensor.Tensor, seed, offset uint64) error { return notBuilt(0) }

// DropoutMask fills t like RandUniform but with a dropout mask: 0 with
// probability p and 1/(1−p) otherwise (the factor that keeps the
// expectation), ready to multiply with the activations. (Tensor.Dropout on
// a GPU uses the same kernel, through tensor.DropoutMasker.)
func DropoutMask(t *tensor.Tensor, p float32, seed, offset uint64) error { return notBuilt(0) }
