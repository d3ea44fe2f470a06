package tensor

import (
	"math"
	"slices"
	"strconv"

	"github.com/chewxy/math32"
)

func defaultBackend(op string) Backend { return mustBackend(op, DefaultDevice()) }

// New returns a Float32 tensor on the default device holding a copy of data
// with the given shape (a 1-D shape when none is given). It panics if the
// shape does not hold len(data) elements, and like Zeros.
func New(data []float32, shape ...int) *Tensor {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	if n := checkAlloc("New", Float32, shape); n != len(data) {
		panicf("New", "shape %v needs %d elements, got %d", shape, n, len(data))
	}
	b := defaultBackend("New")
	return newTensor(b, b.FromFloat32s(data), contiguousLayout(shape))
}

// NewOn is New on device dev instead of the default device: the way back
// from raw float32 slices (Float32s) to a tensor where the input lives, as
// in a Function's Forward. It panics if the shape does not fit data or no
// backend serves dev.
func NewOn(dev Device, data []float32, shape ...int) *Tensor {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	checkShape("NewOn", shape)
	if numel(shape) != len(data) {
		panicf("NewOn", "shape %v needs %d elements, got %d", shape, numel(shape), len(data))
	}
	b := mustBackend("NewOn", dev)
	return newTensor(b, b.FromFloat32s(data), contiguousLayout(shape))
}

// Scalar returns a 0-d Float32 tensor holding v.
func Scalar(v float32) *Tensor {
	b := defaultBackend("Scalar")
	return newTensor(b, b.FromFloat32s([]float32{v}), contiguousLayout([]int{}))
}

// FromInts returns an Int64 tensor holding a copy of data with the given
// shape (1-D when none is given). It panics like New.
func FromInts(data []int, shape ...int) *Tensor {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	if n := checkAlloc("FromInts", Int64, shape); n != len(data) {
		panicf("FromInts", "shape %v needs %d elements, got %d", shape, n, len(data))
	}
	v := make([]int64, len(data))
	for i, x := range data {
		v[i] = int64(x)
	}
	b := defaultBackend("FromInts")
	return newTensor(b, b.FromInt64s(v), contiguousLayout(shape))
}

// Zeros returns a Float32 tensor of zeros. Like every creation function,
// it panics if a dimension is negative, if the number of elements
// overflows int, or if the storage would exceed MaxAllocBytes.
func Zeros(shape ...int) *Tensor {
	return empty("Zeros", defaultBackend("Zeros"), Float32, shape)
}

// Ones returns a Float32 tensor of ones. It panics like Zeros.
func Ones(shape ...int) *Tensor { return full("Ones", 1, shape) }

// Full returns a Float32 tensor with every element set to v. It panics
// like Zeros.
func Full(v float32, shape ...int) *Tensor { return full("Full", v, shape) }

// full is Full, with panics that name op.
func full(op string, v float32, shape []int) *Tensor {
	t := empty(op, defaultBackend(op), Float32, shape)
	if v != 0 {
		t.backend.Fill(t.storage, t.layout, float64(v))
	}
	return t
}

// ZerosLike returns zeros with t's shape, dtype and device.
func ZerosLike(t *Tensor) *Tensor { return empty("ZerosLike", t.backend, t.DType(), t.layout.Shape) }

// OnesLike returns ones with t's shape, dtype and device.
func OnesLike(t *Tensor) *Tensor { return FullLike(t, 1) }

// FullLike returns a tensor with t's shape, dtype and device filled with v.
func FullLike(t *Tensor, v float32) *Tensor {
	out := empty("FullLike", t.backend, t.DType(), t.layout.Shape)
	out.backend.Fill(out.storage, out.layout, float64(v))
	return out
}

// Arange returns the Float32 values start, start+step, ... below end
// (like torch.arange with float arguments). The length and the values are
// computed in float64 from the shortest decimal form of each argument, the
// numbers a PyTorch user types, so Arange(0, 0.3, 0.1) has 3 elements as
// torch.arange(0, 0.3, 0.1) does (float32(0.3)/float32(0.1) is above 3).
//
// Arange panics if an argument is NaN or infinite, if step is zero or
// points away from end, or if the number of elements does not fit in an
// int or under MaxAllocBytes.
func Arange(start, end, step float32) *Tensor {
	for _, v := range []float32{start, end, step} {
		if math32.IsNaN(v) || math32.IsInf(v, 0) {
			panicf("Arange", "start=%v end=%v step=%v: the bounds and the step must be finite", start, end, step)
		}
	}
	if step == 0 || (end-start)*step < 0 && end != start {
		panicf("Arange", "invalid range start=%v end=%v step=%v", start, end, step)
	}
	s, e, st := decimal64(start), decimal64(end), decimal64(step)
	c := max(math.Ceil((e-s)/st), 0)
	// float64(math.MaxInt) rounds up to 2^63, which does not fit: compare
	// with >=
	if !(c < float64(math.MaxInt)) {
		panicf("Arange", "start=%v end=%v step=%v gives %g elements, more than an int can count", start, end, step, c)
	}
	n := int(c)
	checkAlloc("Arange", Float32, []int{n})
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(s + float64(i)*st)
	}
	return New(data, n)
}

// decimal64 returns the float64 nearest to the shortest decimal that
// identifies the float32 x (0.1 for float32(0.1)).
func decimal64(x float32) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
	if err != nil {
		return float64(x)
	}
	return v
}

// ArangeInt returns the Int64 values 0, 1, ..., n-1. It panics if n is
// negative or the tensor would exceed MaxAllocBytes.
func ArangeInt(n int) *Tensor {
	checkAlloc("ArangeInt", Int64, []int{n})
	data := make([]int, n)
	for i := range data {
		data[i] = i
	}
	return FromInts(data, n)
}

// Eye returns the n×n identity matrix. It panics if n is negative, n×n
// overflows int, or the matrix would exceed MaxAllocBytes.
func Eye(n int) *Tensor {
	checkShape("Eye", []int{n, n})
	data := make([]float32, n*n)
	for i := range n {
		data[i*n+i] = 1
	}
	return New(data, n, n)
}

// Clone returns a contiguous copy of t with its own storage. The copy is
// recorded, so gradients flow back to t.
func (t *Tensor) Clone() *Tensor {
	out := emptyOut("Clone", t.backend, t.DType(), t.layout.Shape) // Copy writes every element
	t.backend.Copy(out.storage, out.layout, t.storage, t.layout)
	ts := t.sink()
	record("Clone", out, []*Tensor{t}, func(g *Tensor) { ts.accumulate(g) })
	return out
}

// Contiguous returns t if it is already contiguous, else a contiguous copy.
func (t *Tensor) Contiguous() *Tensor {
	if t.IsContiguous() {
		return t
	}
	return t.Clone()
}

// dense returns t if its elements are storage[0:Numel()] in row-major order,
// else a contiguous copy (recorded like Clone). Kernels that take a bare
// Storage without a Layout need this: a contiguous view may still start at
// a nonzero offset (a slice along dim 0, Select, a Cat gradient piece).
func (t *Tensor) dense() *Tensor {
	if t.IsContiguous() && t.layout.Offset == 0 {
		return t
	}
	return t.Clone()
}

// Float returns t converted to Float32 (t itself if it already is), as
// PyTorch's t.float(). From BFloat16 or Float16 it is ToDType(Float32),
// differentiable.
func (t *Tensor) Float() *Tensor {
	if t.DType() == Float32 {
		return t
	}
	if t.DType().IsFloatingPoint() {
		return t.ToDType(Float32)
	}
	out := empty("Float", t.backend, Float32, t.layout.Shape)
	t.backend.Copy(out.storage, out.layout, t.storage, t.layout)
	return out
}

// Long returns t converted to Int64, truncating toward zero (t itself if it
// already is Int64). NaN, ±Inf and values outside the int64 range become
// math.MinInt64 on every device, as on PyTorch's CPU (see ToInt64).
func (t *Tensor) Long() *Tensor {
	if t.DType() == Int64 {
		return t
	}
	out := empty("Long", t.backend, Int64, t.layout.Shape)
	t.backend.Copy(out.storage, out.layout, t.storage, t.layout)
	return out
}

// CopyFrom copies src's elements into t in place (shapes must match; src is
// converted to t's dtype and device). It is never recorded, whatever the
// grad mode: use it for parameter updates and loading, inside
// autograd.NoGrad or through t.Detach() when t requires a gradient.
//
// CopyFrom panics if the shapes differ, or if t requires a gradient while
// the calling goroutine records (an in-place write to a leaf that requires
// grad, as PyTorch raises; see Fill_).
func (t *Tensor) CopyFrom(src *Tensor) {
	checkInPlace("CopyFrom", t)
	if !slices.Equal(t.layout.Shape, src.layout.Shape) {
		panicf("CopyFrom", "source shape %v does not match destination shape %v", src.layout.Shape, t.layout.Shape)
	}
	if src.Device() != t.Device() {
		src = src.To(t.Device())
	}
	t.backend.Copy(t.storage, t.layout, src.storage, src.layout)
}

// Fill_ sets every element of t to v in place (not recorded) and returns t.
//
// Like every in-place operation (CopyFrom, NormalInit, UniformInit,
// AdamWUpdate), Fill_ panics if t requires a gradient while the calling
// goroutine records: PyTorch raises "a leaf Variable that requires grad is
// being used in an in-place operation". Write inside autograd.NoGrad, or
// through t.Detach(), a view that does not require a gradient:
//
//	autograd.NoGrad(func() { w.Fill_(0) })
//	w.Detach().Fill_(0)
func (t *Tensor) Fill_(v float32) *Tensor {
	checkInPlace("Fill_", t)
	t.backend.Fill(t.storage, t.layout, float64(v))
	return t
}

// SetFloat32s copies data into the elements offset, offset+1, …,
// offset+len(data)−1 of t (counted in row-major order), in place. Like
// CopyFrom it is never recorded. It lets a loader fill a large tensor piece
// by piece from a file without holding a second copy of it.
// A BFloat16 or Float16 tensor on the CPU takes the values rounded to
// nearest even (exact for values read from a file of that dtype).
// SetFloat32s panics if t is not a contiguous Float32 tensor (or 16-bit
// one on the CPU) or the range does not lie within its elements.
func (t *Tensor) SetFloat32s(offset int, data []float32) *Tensor {
	_, onCPU := t.storage.(*cpuStorage)
	if t.DType() != Float32 && !(is16(t.DType()) && onCPU) || !t.IsContiguous() {
		panicf("SetFloat32s", "expected a contiguous float32 tensor, got %s tensor of shape %v and strides %v", t.DType(), t.layout.Shape, t.layout.Strides)
	}
	if n := t.Numel(); offset < 0 || offset > n || len(data) > n-offset {
		panicf("SetFloat32s", "elements [%d, %d) are outside the %d of shape %v", offset, offset+len(data), n, t.layout.Shape)
	}
	checkInPlace("SetFloat32s", t)
	if len(data) == 0 {
		return t
	}
	start := t.layout.Offset + offset
	if s, ok := t.storage.(*cpuStorage); ok {
		if is16(t.DType()) {
			from, h := halfOf(t.DType()).from, s.live().h[start:start+len(data)]
			for i, v := range data {
				h[i] = from(v)
			}
			return t
		}
		copy(s.live().f[start:start+len(data)], data)
		return t
	}
	src := t.backend.FromFloat32s(data)
	t.backend.Copy(t.storage, Layout{Shape: []int{len(data)}, Strides: []int{1}, Offset: start}, src, contiguousLayout([]int{len(data)}))
	return t
}

// Linspace returns steps Float32 values evenly spaced from start to end,
// both included (torch.linspace). Like PyTorch it computes from both ends:
// with step = (end−start)/(steps−1) in float32, element i is start + step·i
// for i < steps/2 and end − step·(steps−1−i) after, each a fused
// multiply-add rounded once. These are the bits of torch.linspace on a GPU,
// and on the CPU for fewer than 16 steps (32 with AVX-512); for longer
// ones PyTorch's vectorised CPU kernel steps through lanes and may differ
// in the last bit. Linspace panics with an *Error if steps is negative.
func Linspace(start, end float32, steps int) *Tensor {
	if steps < 0 {
		panicf("Linspace", "number of steps must be non-negative, got %d", steps)
	}
	checkAlloc("Linspace", Float32, []int{steps})
	data := make([]float32, steps)
	if steps == 1 {
		data[0] = start
	}
	if steps > 1 {
		step := (end - start) / float32(steps-1)
		half := steps / 2
		for i := range data {
			if i < half {
				data[i] = fma32(step, float32(i), start)
			} else {
				data[i] = fma32(-step, float32(steps-1-i), end)
			}
		}
	}
	return New(data, steps)
}

// fma32 returns a·b + c rounded once to float32. The product of two
// float32s is exact in float64; the float64 sum is exact too unless it
// rounds, and then its error e (TwoSum) decides the one case where
// rounding the sum again to float32 could go the wrong way: a sum exactly
// halfway between two float32s.
func fma32(a, b, c float32) float32 {
	p, q := float64(a)*float64(b), float64(c)
	s := p + q
	bv := s - p
	e := (p - (s - bv)) + (q - bv)
	r := float32(s)
	if e == 0 || float64(r) == s || math.IsInf(s, 0) || math.IsNaN(s) {
		return r
	}
	// the float32 neighbour of r on s's side, and the midpoint between
	other := math32.Nextafter(r, float32(math.Copysign(math.Inf(1), s-float64(r))))
	if mid := (float64(r) + float64(other)) / 2; mid != s {
		return r // s is not a tie: rounding it is rounding the exact value
	}
	// s is a tie that rounded to r; the exact value s+e lies toward e
	if (e > 0) == (float64(other) > float64(r)) {
		return other
	}
	return r
}
