package tensor

import (
	"fmt"
	"sync/atomic"

	"github.com/wickml/wick/autograd"
)

// Tensor is an n-dimensional array of Float32, Int64, BFloat16 or Float16
// elements on a device, viewed through a Layout over a Storage that views
// may share. Operations run immediately; when an input requires a gradient
// (and recording is on) the operation is recorded on the autograd tape so
// that Backward can differentiate it.
//
// Methods panic with an *Error when called with shapes, dtypes or
// dimensions that cannot be right; see Catch.
type Tensor struct {
	storage Storage
	layout  Layout
	backend Backend

	requiresGrad bool
	grad         *Tensor        // accumulated gradient of a leaf
	node         *autograd.Node // the node that produced this tensor, or its leaf node
	cell         *gradCell      // a non-leaf's pending gradient during Backward (gradSink)
	name         string         // op that produced it, for printing grad_fn
	accumulating atomic.Bool    // a Backward is adding into grad (misuse detection)
	retainsGrad  bool           // a non-leaf that keeps its gradient in grad (RetainGrad)
	gradInto     *Tensor        // where a leaf's gradient is accumulated (SetGradBuffer), or nil
	gradScale    float32        // the factor of gradients accumulated into gradInto
}

func newTensor(b Backend, s Storage, l Layout) *Tensor {
	return &Tensor{storage: s, layout: l, backend: b}
}

// empty allocates a zero-filled contiguous tensor on backend b. It panics
// with an *Error for op if shape is invalid or the storage would exceed
// MaxAllocBytes.
func empty(op string, b Backend, dt DType, shape []int) *Tensor {
	n := checkAlloc(op, dt, shape)
	return newTensor(b, b.Alloc(dt, n), contiguousLayout(shape))
}

// Shape returns a copy of the tensor's shape.
func (t *Tensor) Shape() []int { return cloneInts(t.layout.Shape) }

// Strides returns a copy of the tensor's strides, in elements.
func (t *Tensor) Strides() []int { return cloneInts(t.layout.Strides) }

// Offset returns the position of the first element in the storage.
func (t *Tensor) Offset() int { return t.layout.Offset }

// Layout returns the tensor's layout (shape, strides, offset).
func (t *Tensor) Layout() Layout {
	return Layout{Shape: t.Shape(), Strides: t.Strides(), Offset: t.layout.Offset}
}

// Storage returns the storage the tensor views. It is meant for backends.
func (t *Tensor) Storage() Storage { return t.storage }

// Dim returns the number of dimensions.
func (t *Tensor) Dim() int { return len(t.layout.Shape) }

// Size returns the size of dimension dim (negative counts from the end).
func (t *Tensor) Size(dim int) int { return t.layout.Shape[normDimOf("Size", dim, t.layout.Shape)] }

// Numel returns the number of elements.
func (t *Tensor) Numel() int { return t.layout.Numel() }

// DType returns the element type.
func (t *Tensor) DType() DType { return t.storage.DType() }

// Device returns the device the tensor lives on.
func (t *Tensor) Device() Device { return t.storage.Device() }

// IsContiguous reports whether the elements are laid out row-major without
// gaps.
func (t *Tensor) IsContiguous() bool { return t.layout.IsContiguous() }

// Float32s returns a host copy of the elements in row-major order (Int64
// tensors are converted). It panics if the copy would exceed MaxAllocBytes
// (possible for a view such as Expand's, which needs little storage).
func (t *Tensor) Float32s() []float32 {
	dt := t.DType()
	if is16(dt) {
		dt = Float32 // the host copy is float32
	}
	checkAlloc("Float32s", dt, t.layout.Shape)
	if t.DType() == Int64 {
		ints := t.backend.Int64s(t.storage, t.layout)
		out := make([]float32, len(ints))
		for i, v := range ints {
			out[i] = float32(v)
		}
		return out
	}
	return t.backend.Float32s(t.storage, t.layout)
}

// Ints returns a host copy of the elements as ints (Float32 tensors are
// truncated toward zero; NaN, ±Inf and out-of-range values give
// math.MinInt64, see ToInt64). It panics like Float32s.
func (t *Tensor) Ints() []int {
	checkAlloc("Ints", Int64, t.layout.Shape)
	var src []int64
	if t.DType() == Int64 {
		src = t.backend.Int64s(t.storage, t.layout)
	} else {
		f := t.backend.Float32s(t.storage, t.layout)
		src = make([]int64, len(f))
		for i, v := range f {
			src[i] = ToInt64(float64(v))
		}
	}
	out := make([]int, len(src))
	for i, v := range src {
		out[i] = int(v)
	}
	return out
}

// Item returns the value of a one-element tensor.
func (t *Tensor) Item() float32 {
	if t.Numel() != 1 {
		panicf("Item", "a tensor with %d elements (shape %v) cannot be converted to a scalar", t.Numel(), t.layout.Shape)
	}
	return t.Float32s()[0]
}

// At returns the element at the given index (one per dimension; negative
// indices count from the end).
func (t *Tensor) At(idx ...int) float32 {
	if len(idx) != t.Dim() {
		panicf("At", "got %d indices for a tensor of shape %v", len(idx), t.layout.Shape)
	}
	off := t.layout.Offset
	for d, i := range idx {
		n := t.layout.Shape[d]
		if i < -n || i >= n {
			panicf("At", "index %d is out of bounds for dimension %d with size %d (shape %v)", i, d, n, t.layout.Shape)
		}
		if i < 0 {
			i += n
		}
		off += i * t.layout.Strides[d]
	}
	l := Layout{Shape: []int{1}, Strides: []int{1}, Offset: off}
	if t.DType() == Int64 {
		return float32(t.backend.Int64s(t.storage, l)[0])
	}
	return t.backend.Float32s(t.storage, l)[0]
}

// To returns the tensor on dev, copying it if it lives elsewhere. The copy
// is recorded, so gradients flow back to the original.
func (t *Tensor) To(dev Device) *Tensor {
	if dev == t.Device() {
		return t
	}
	b := mustBackend("To", dev)
	checkAlloc("To", t.DType(), t.layout.Shape)
	var s Storage
	switch {
	case is16(t.DType()):
		b16, ok := b.(Backend16)
		if !ok {
			panicf("To", "%s tensors are not supported on %s, got shape %v to move there", t.DType(), dev, t.layout.Shape)
		}
		s = b16.FromBits16(t.DType(), mustBackend16("To", t).Bits16(t.storage, t.layout))
	case t.DType() == Int64:
		s = b.FromInt64s(t.backend.Int64s(t.storage, t.layout))
	default:
		s = b.FromFloat32s(t.backend.Float32s(t.storage, t.layout))
	}
	out := newTensor(b, s, contiguousLayout(t.layout.Shape))
	record("To", out, []*Tensor{t}, func(g *Tensor) { t.accumulate(g.To(t.Device())) })
	return out
}

// Backend returns the backend that runs the tensor's operations.
func (t *Tensor) Backend() Backend { return t.backend }

// sameDevice panics unless all tensors are on one device.
func sameDevice(op string, ts ...*Tensor) {
	for _, u := range ts[1:] {
		if u.Device() != ts[0].Device() {
			panicf(op, "expected all tensors on the same device, got %s and %s", ts[0].Device(), u.Device())
		}
	}
}

// mustFloat panics unless every tensor is Float32.
func mustFloat(op string, ts ...*Tensor) {
	for _, u := range ts {
		if u.DType() != Float32 {
			panicf(op, "expected a float32 tensor, got %s tensor of shape %v", u.DType(), u.layout.Shape)
		}
	}
}

// mustFloating panics unless every tensor has a floating-point dtype
// (Float32, BFloat16, Float16) and the 16-bit ones are on a backend that
// holds them (Backend16: the CPU's and the CUDA backend's).
func mustFloating(op string, ts ...*Tensor) {
	for _, u := range ts {
		if !u.DType().IsFloatingPoint() || is16(u.DType()) && !has16(u.backend) {
			panicf(op, "expected a float32 tensor (or bfloat16, float16 on a device that holds them), got %s tensor of shape %v on %s", u.DType(), u.layout.Shape, u.Device())
		}
	}
}

func (t *Tensor) describe() string {
	return fmt.Sprintf("%s%v", t.DType(), t.layout.Shape)
}
