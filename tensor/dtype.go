package tensor

import (
	"fmt"
	"math"
)

// DType is the element type of a tensor.
type DType int

const (
	// Float32 is the default floating-point type, that every op and every
	// device accepts.
	Float32 DType = iota
	// Int64 holds indices: embedding lookups, targets and ArgMax results.
	Int64
	// BFloat16 is the brain floating-point format (torch.bfloat16):
	// float32's sign and 8-bit exponent with a 7-bit mantissa, in 2
	// bytes, on the CPU for now. Tensors of it are created by casting
	// (ToDType, BFloat16) or from bit patterns (FromBits16), and take the
	// ops with PyTorch's CPU semantics: elementwise ops compute in
	// float32 and round once; reductions, softmax, layer norm,
	// cross-entropy and MatMul accumulate in float32 and round once.
	// A leaf of it can require a gradient, which is of its dtype. The
	// fused optimizer and attention kernels panic with an *Error naming
	// the dtype.
	BFloat16
	// Float16 is IEEE 754 half precision (torch.float16, "half"): a 5-bit
	// exponent and a 10-bit mantissa, largest finite value 65504. It is
	// supported as far as BFloat16 is.
	Float16
)

// dtypes is the one table of the dtypes: every property of a DType that
// the code needs is a field of its row, so that a new dtype is one row and
// nothing answers for it by default.
var dtypes = [...]struct {
	name  string // as PyTorch spells it, without "torch."
	size  int    // bytes per element
	float bool   // a floating-point type (casts between them are differentiable)
}{
	Float32:  {"float32", 4, true},
	Int64:    {"int64", 8, false},
	BFloat16: {"bfloat16", 2, true},
	Float16:  {"float16", 2, true},
}

// valid reports whether d is one of the dtypes of the table.
func (d DType) valid() bool { return d >= 0 && int(d) < len(dtypes) }

// String returns the dtype's name as PyTorch spells it ("float32",
// "int64", "bfloat16", "float16"), or DType(n) for a value that is not a
// dtype.
func (d DType) String() string {
	if !d.valid() {
		return fmt.Sprintf("DType(%d)", int(d))
	}
	return dtypes[d].name
}

// ItemSize returns the size of one element of d in bytes, as PyTorch's
// dtype.itemsize does: 4 for Float32, 8 for Int64, 2 for BFloat16 and
// Float16. It panics with an
// *Error for a value that is not a dtype.
func (d DType) ItemSize() int {
	if !d.valid() {
		panic(&Error{Op: "DType.ItemSize", Msg: fmt.Sprintf("%s is not a dtype", d)})
	}
	return dtypes[d].size
}

// IsFloatingPoint reports whether d is a floating-point dtype (Float32,
// BFloat16, Float16), as torch.dtype.is_floating_point does.
func (d DType) IsFloatingPoint() bool { return d.valid() && dtypes[d].float }

// ToInt64 converts a float to int64 as every backend converts Float32 to
// Int64 (Long, Ints, copies between dtypes): truncating toward zero, with
// NaN, ±Inf and values outside [−2^63, 2^63) all giving math.MinInt64.
// That is PyTorch's CPU result on x86-64 (torch 1.13: tensor.to(torch.int64)
// of NaN, ±inf, ±1e19 is −9223372036854775808). Go's own conversion and
// the GPU's cvt.rzi.s64.f32 leave those cases to the machine (x86-64 gives
// math.MinInt64, arm64 and the GPU saturate, and NaN becomes 0), so both
// backends spell the rule out.
func ToInt64(v float64) int64 {
	if v >= -0x1p63 && v < 0x1p63 {
		return int64(v)
	}
	return math.MinInt64
}

// DeviceKind is the kind of processor a tensor lives on.
type DeviceKind int

const (
	// KindCPU is the host processor.
	KindCPU DeviceKind = iota
	// KindCUDA is an NVIDIA GPU.
	KindCUDA
)

// Device names where a tensor's storage lives and where its operations run.
type Device struct {
	Kind  DeviceKind
	Index int
}

// CPU is the host device, the default.
var CPU = Device{Kind: KindCPU}

// CUDA returns the i-th NVIDIA GPU. Operations on it need a build with the
// cuda tag; see package cuda.
func CUDA(i int) Device { return Device{Kind: KindCUDA, Index: i} }

// String returns "cpu" or "cuda:N".
func (d Device) String() string {
	if d.Kind == KindCUDA {
		return fmt.Sprintf("cuda:%d", d.Index)
	}
	return "cpu"
}

// ParseDevice parses "cpu", "cuda" or "cuda:N".
func ParseDevice(s string) (Device, error) {
	switch s {
	case "cpu":
		return CPU, nil
	case "cuda":
		return CUDA(0), nil
	}
	var i int
	if n, err := fmt.Sscanf(s, "cuda:%d", &i); err == nil && n == 1 && i >= 0 && s == fmt.Sprintf("cuda:%d", i) {
		return CUDA(i), nil
	}
	return Device{}, fmt.Errorf("unknown device %q (want cpu, cuda or cuda:N)", s)
}
