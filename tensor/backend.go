package tensor

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Storage is a flat buffer of elements owned by a backend. Tensors view
// storages through a Layout; several tensors may share one storage.
type Storage interface {
	Device() Device
	DType() DType
	Len() int
}

// ReduceOp names a reduction along one dimension.
type ReduceOp int

// The reductions. ArgMax writes Int64 indices (the first maximum).
const (
	ReduceSum ReduceOp = iota
	ReduceMax
	ReduceMin
	ReduceArgMax
	ReduceArgMin
	ReduceLogSumExp
)

// ScanOp names a cumulative operation along a row.
type ScanOp int

// The scans: running sums and running products.
const (
	ScanSum ScanOp = iota
	ScanProd
)

var scanNames = [...]string{"Cumsum", "Cumprod"}

// String returns the op's user-facing name, such as "Cumsum".
func (op ScanOp) String() string { return scanNames[op] }

// Backend is the set of primitive kernels that a device implements. Every
// higher operation of package tensor (and every derivative) is composed from
// these. Each kernel receives storages and, where inputs may be strided, their
// layouts; destinations are contiguous unless a Layout is given for them.
// Kernels may assume that the tensor package has checked shapes and dtypes.
//
// The CPU backend (always present) is the readable reference; the CUDA
// backend (package cuda, build tag cuda) implements the same set.
type Backend interface {
	// Device is the device whose storages this backend owns.
	Device() Device
	// Alloc returns a zero-filled storage of n elements.
	Alloc(dt DType, n int) Storage
	// FromFloat32s and FromInt64s copy host data into a new storage.
	FromFloat32s(data []float32) Storage
	FromInt64s(data []int64) Storage
	// Float32s and Int64s copy the elements of a view to the host in
	// row-major order.
	Float32s(s Storage, l Layout) []float32
	Int64s(s Storage, l Layout) []int64

	// Copy copies src (layout sl) into dst (layout dl); shapes are equal.
	// If the dtypes differ, values are converted (float→int as ToInt64
	// does). src and dst may be overlapping views of one storage: the
	// result is as if src were read in full before dst is written.
	Copy(dst Storage, dl Layout, src Storage, sl Layout)
	// Fill sets every element of the view to v.
	Fill(dst Storage, dl Layout, v float64)
	// Unary writes op(src) into the contiguous dst.
	Unary(op UnaryOp, p UnaryParams, dst, src Storage, sl Layout)
	// UnaryGrad writes g·op'(x) into dst, where y = op(x); all contiguous
	// with n elements.
	UnaryGrad(op UnaryOp, p UnaryParams, dst, g, x, y Storage, n int)
	// Binary writes op(a, b) into the contiguous dst; al and bl have the
	// output's shape (broadcast dimensions have stride 0).
	Binary(op BinaryOp, dst, a Storage, al Layout, b Storage, bl Layout)
	// Where writes cond ? a : b into dst (cond is nonzero-true);
	// all layouts have the output's shape.
	Where(dst, cond Storage, cl Layout, a Storage, al Layout, b Storage, bl Layout)
	// Reduce reduces src along dim into the contiguous dst, whose shape is
	// sl's with dim removed.
	Reduce(op ReduceOp, dst, src Storage, sl Layout, dim int)
	// MatMul writes a @ b into the contiguous dst. al is [..., m, k] and
	// bl is [..., k, n] with the same batch shape (strides may be 0 or
	// transposed); dst is [..., m, n].
	MatMul(dst, a Storage, al Layout, b Storage, bl Layout)
	// Softmax writes softmax (or log-softmax) of each contiguous row.
	Softmax(dst, src Storage, rows, cols int, log bool)
	// SoftmaxGrad writes the input gradient of (log-)softmax given the
	// output y and its gradient g.
	SoftmaxGrad(dst, g, y Storage, rows, cols int, log bool)
	// LayerNorm normalises each contiguous row of x, scales by w and
	// shifts by b (either may be nil), and saves each row's mean and
	// reciprocal standard deviation.
	LayerNorm(dst, mean, rstd, x, w, b Storage, rows, cols int, eps float32)
	// LayerNormGrad writes dx and adds into dw, db (nil if not wanted).
	LayerNormGrad(dx, dw, db, g, x, mean, rstd, w Storage, rows, cols int)
	// Gather copies rows idx[i] of the contiguous [*, rowLen] src into row i
	// of dst. With rowLen 1 the indices are storage offsets, which is how
	// Tensor.Gather, Scatter and ScatterAdd reach any strided element.
	Gather(dst, src, idx Storage, n, rowLen int)
	// ScatterAdd adds row i of src into row idx[i] of dst (rows may
	// repeat: every addition lands).
	ScatterAdd(dst, idx, src Storage, n, rowLen int)
	// Sort sorts each contiguous row of src ([rows, cols]) into vals and
	// writes each value's position in its row into the Int64 idx: stable
	// (equal values keep their order, in either direction), ascending or
	// descending, NaN above every number (NaNs last ascending, first
	// descending; -0 equals +0).
	Sort(vals, idx, src Storage, rows, cols int, descending bool)
	// Scan writes the running sum or product of each contiguous row of src
	// ([rows, cols]) into dst, accumulated in float64 and rounded to
	// float32 at each element; reverse runs from each row's end.
	Scan(op ScanOp, dst, src Storage, rows, cols int, reverse bool)
	// CrossEntropy writes each row's loss (0 for ignored rows) for logits
	// [rows, cols] and Int64 targets.
	CrossEntropy(loss, logits, targets Storage, rows, cols int, ignore int64)
	// CrossEntropyGrad writes scale·(softmax(logits) - onehot(target)) for
	// each row (zero rows for ignored targets).
	CrossEntropyGrad(dst, logits, targets Storage, rows, cols int, ignore int64, scale float32)
	// AdamW updates param and its moment estimates m, v in place from grad
	// (n contiguous elements) with PyTorch's AdamW rule.
	AdamW(param, grad, m, v Storage, n int, c AdamWStep)
}

// DropoutMasker is an optional Backend method, checked by Dropout: a
// backend that implements it draws dropout masks on the device instead of
// having them drawn on the host and copied (the CUDA backend does). The
// mask's n elements must be 0 with probability p and 1/(1−p) otherwise, a
// function of seed and the element index only. DropoutWith takes the seed
// from its generator (Dropout from the global one), so seeding the
// generator still makes masks repeatable, but a device's masks differ from
// the CPU's (as in PyTorch).
type DropoutMasker interface {
	DropoutMask(dst Storage, n int, p float32, seed uint64)
}

// Normer is an optional Backend method, checked by GlobalNorm: a backend
// that implements it computes the L2 norm of many tensors in one pass. It
// writes √(Σ x²) over the first ns[i] elements of each contiguous Float32
// storage srcs[i], the squares summed in float64 and the root rounded once
// to float32, into the one-element dst.
type Normer interface {
	GlobalNorm(dst Storage, srcs []Storage, ns []int)
}

// AdamWStep are the scalars of one AdamW update (PyTorch's rule):
//
//	p ← p·(1 − lr·wd)
//	m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
//	p ← p − lr/(1−β1^t) · m / (√v/√(1−β2^t) + eps)
type AdamWStep struct {
	LR, Beta1, Beta2, Eps, WeightDecay float64
	Step                               int
}

var backends = map[DeviceKind]func(index int) (Backend, error){
	KindCPU: func(int) (Backend, error) { return cpu, nil },
}

// RegisterBackend makes the backend constructor available for devices of
// kind. Package cuda calls it from init in builds with the cuda tag.
func RegisterBackend(kind DeviceKind, open func(index int) (Backend, error)) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends[kind] = open
}

// backendsMu guards backends and openBackends: devices may be opened from
// several goroutines.
var backendsMu sync.Mutex

var openBackends = map[Device]Backend{CPU: cpu}

// BackendFor returns the backend of dev, or an error when the device is not
// available (no GPU build, no such device).
func BackendFor(dev Device) (Backend, error) {
	if dev == CPU {
		return cpu, nil
	}
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if b, ok := openBackends[dev]; ok {
		return b, nil
	}
	open, ok := backends[dev.Kind]
	if !ok {
		return nil, fmt.Errorf("tensor: device %s is not available: this binary was built without GPU support (rebuild with -tags cuda on a machine with the NVIDIA driver)", dev)
	}
	b, err := open(dev.Index)
	if err != nil {
		return nil, fmt.Errorf("tensor: device %s: %w", dev, err)
	}
	openBackends[dev] = b
	return b, nil
}

func mustBackend(op string, dev Device) Backend {
	b, err := BackendFor(dev)
	if err != nil {
		panicf(op, "%v", err)
	}
	return b
}

// defaultDev holds the default device; the zero value means CPU.
var defaultDev atomic.Pointer[Device]

// SetDefaultDevice sets the device on which creation functions allocate,
// for the whole process (like torch.set_default_device): set it once at
// start-up. It is safe to call while other goroutines create tensors, which
// then allocate on either device. It returns an error if the device is not
// available.
func SetDefaultDevice(dev Device) error {
	if _, err := BackendFor(dev); err != nil {
		return err
	}
	defaultDev.Store(&dev)
	return nil
}

// DefaultDevice returns the device on which creation functions allocate.
func DefaultDevice() Device {
	if d := defaultDev.Load(); d != nil {
		return *d
	}
	return CPU
}
