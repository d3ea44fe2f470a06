package tensor

import "math"

// The 16-bit floating-point dtypes, BFloat16 and Float16: the conversions
// to and from float32 that every cast goes through, with PyTorch's
// rounding (torch 1.13 on the CPU; testdata/dtype/casts.bin, written by
// scripts/gen_golden_dtype.py, holds its results).

// BF16FromFloat32 returns the bfloat16 bit pattern nearest to f, ties to
// even, as PyTorch casts a tensor to torch.bfloat16: values beyond the
// largest bfloat16 become ±Inf, float32 subnormals round like any other
// value, and every NaN becomes 0xFFFF (PyTorch's vectorised CPU cast; its
// scalar path gives 0x7FC0, a NaN too).
func BF16FromFloat32(f float32) uint16 {
	if f != f {
		return 0xFFFF
	}
	b := math.Float32bits(f)
	return uint16((b + 0x7FFF + (b>>16)&1) >> 16)
}

// BF16ToFloat32 returns the float32 value of the bfloat16 bit pattern h
// (exact: bfloat16 is float32 without its low 16 bits; NaN payloads are
// kept).
func BF16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F16FromFloat32 returns the float16 bit pattern nearest to f, ties to
// even, as PyTorch casts to torch.float16: values from 65520 on (halfway
// beyond the largest, 65504) become ±Inf, small values become float16
// subnormals or ±0, and a NaN becomes 0x7E00 with f's sign.
func F16FromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xFF
	man := b & 0x7FFFFF
	if exp == 0xFF {
		if man != 0 {
			return sign | 0x7E00
		}
		return sign | 0x7C00
	}
	e := exp - 127 + 15 // float16's biased exponent
	switch {
	case e >= 0x1F:
		return sign | 0x7C00
	case e <= 0:
		// a subnormal (or zero): units of 2^-24
		if e < -10 {
			return sign
		}
		m := man | 0x800000
		shift := uint(14 - e)
		r, rem, half := m>>shift, m&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || rem == half && r&1 == 1 {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | man>>13
	if rem := man & 0x1FFF; rem > 0x1000 || rem == 0x1000 && r&1 == 1 {
		r++ // a carry into the exponent is right, up to Inf
	}
	return sign | uint16(r)
}

// F16ToFloat32 returns the float32 value of the float16 bit pattern h
// (exact; a NaN keeps its payload and becomes quiet, as the x86 F16C
// conversion that PyTorch uses makes it).
func F16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1F
	man := uint32(h & 0x3FF)
	switch {
	case exp == 0x1F && man != 0:
		return math.Float32frombits(sign | 0x7FC00000 | man<<13)
	case exp == 0x1F:
		return math.Float32frombits(sign | 0x7F800000)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	case man == 0:
		return math.Float32frombits(sign)
	}
	v := float32(man) * 0x1p-24 // a subnormal, exact in float32
	if sign != 0 {
		v = -v
	}
	return v
}

// half16 is the conversion pair of a 16-bit float dtype.
type half16 struct {
	from func(float32) uint16
	to   func(uint16) float32
}

// halfOf returns the conversions of BFloat16 or Float16.
func halfOf(dt DType) half16 {
	if dt == BFloat16 {
		return half16{BF16FromFloat32, BF16ToFloat32}
	}
	return half16{F16FromFloat32, F16ToFloat32}
}

// is16 reports whether dt is one of the 16-bit float dtypes.
func is16(dt DType) bool { return dt == BFloat16 || dt == Float16 }

// ToDType returns t converted to dt, as PyTorch's t.to(dtype) (Wick's To
// takes a device; candle calls this to_dtype): t itself if it already has
// dt, else a new contiguous tensor. Float32 to BFloat16 or Float16 rounds
// to nearest even (see BF16FromFloat32, F16FromFloat32), the other way is
// exact; to Int64 truncates as Long does; from Int64 rounds through
// float32. Between floating-point dtypes the cast is differentiable: the
// gradient is cast back to t's dtype, as PyTorch's ToCopyBackward does.
//
// ToDType panics with an *Error for a value that is not a dtype, and for
// BFloat16 or Float16 on a device whose backend does not hold them (see
// Backend16: the CPU and CUDA backends do).
func (t *Tensor) ToDType(dt DType) *Tensor {
	const op = "ToDType"
	if !dt.valid() {
		panicf(op, "%s is not a dtype", dt)
	}
	if dt == t.DType() {
		return t
	}
	if (is16(dt) || is16(t.DType())) && !has16(t.backend) {
		panicf(op, "bfloat16 and float16 tensors are not supported on %s, got a %s tensor of shape %v to cast to %s",
			t.Device(), t.DType(), t.layout.Shape, dt)
	}
	out := emptyOut(op, t.backend, dt, t.layout.Shape) // Copy writes every element
	t.backend.Copy(out.storage, out.layout, t.storage, t.layout)
	if dt.IsFloatingPoint() && t.DType().IsFloatingPoint() {
		from := t.DType()
		record(op, out, []*Tensor{t}, func(g *Tensor) { t.accumulate(g.ToDType(from)) })
	}
	return out
}

// BFloat16 returns t converted to BFloat16, as PyTorch's t.bfloat16():
// ToDType(BFloat16).
func (t *Tensor) BFloat16() *Tensor { return t.ToDType(BFloat16) }

// Half returns t converted to Float16, as PyTorch's t.half():
// ToDType(Float16).
func (t *Tensor) Half() *Tensor { return t.ToDType(Float16) }

// FromBits16 returns a tensor of dt (BFloat16 or Float16) on the CPU whose
// elements are the bit patterns in data (copied), in the given shape
// (data's length if none): the way in for 16-bit values read from a file
// without a float32 copy, as torch.frombuffer(buf, dtype=torch.bfloat16)
// is. It panics with an *Error if dt is not a 16-bit float dtype or the
// shape does not fit data.
func FromBits16(dt DType, data []uint16, shape ...int) *Tensor {
	const op = "FromBits16"
	if !is16(dt) {
		panicf(op, "want BFloat16 or Float16, got %s", dt)
	}
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	if n := checkAlloc(op, dt, shape); n != len(data) {
		panicf(op, "shape %v needs %d elements, got %d", shape, n, len(data))
	}
	s := &cpuStorage{dt: dt, h: append(make([]uint16, 0, len(data)), data...)}
	return newTensor(cpu, s, contiguousLayout(cloneInts(shape)))
}

// Bits16 returns a host copy of the bit patterns of a BFloat16 or Float16
// tensor in row-major order (the way out to a file, with NaN payloads as
// they are). It panics with an *Error for a tensor of another dtype.
func (t *Tensor) Bits16() []uint16 {
	if !is16(t.DType()) {
		panicf("Bits16", "want a bfloat16 or float16 tensor, got %s of shape %v", t.DType(), t.layout.Shape)
	}
	if t.Device() != CPU {
		return mustBackend16("Bits16", t).Bits16(t.storage, t.layout)
	}
	c := t.Contiguous()
	n := c.Numel()
	return append([]uint16(nil), c.storage.(*cpuStorage).live().h[c.layout.Offset:c.layout.Offset+n]...)
}

// Backend16 is implemented by a backend that holds BFloat16 and Float16
// storages (the CPU's; the CUDA backend's): their bit patterns to and from
// the host, as Tensor.To moves them between devices (exactly, NaN payloads
// included) and Bits16 reads them.
type Backend16 interface {
	// FromBits16 copies the bit patterns in data into a new storage of
	// dt (BFloat16 or Float16).
	FromBits16(dt DType, data []uint16) Storage
	// Bits16 copies the bit patterns of a 16-bit view to the host in
	// row-major order.
	Bits16(s Storage, l Layout) []uint16
}

// has16 reports whether b holds 16-bit storages.
func has16(b Backend) bool {
	_, ok := b.(Backend16)
	return ok
}

// mustBackend16 returns t's backend as a Backend16, panicking naming op
// when it is not one.
func mustBackend16(op string, t *Tensor) Backend16 {
	b, ok := t.backend.(Backend16)
	if !ok {
		panicf(op, "bfloat16 and float16 tensors are not supported on %s, got a %s tensor of shape %v", t.Device(), t.DType(), t.layout.Shape)
	}
	return b
}

// FromBits16 copies the bit patterns in data into a new 16-bit storage.
func (cpuBackend) FromBits16(dt DType, data []uint16) Storage {
	return &cpuStorage{dt: dt, h: append(make([]uint16, 0, len(data)), data...)}
}

// Bits16 copies the bit patterns of a 16-bit view to the host.
func (b cpuBackend) Bits16(s Storage, l Layout) []uint16 {
	out := &cpuStorage{dt: s.DType(), h: make([]uint16, l.Numel())}
	b.Copy(out, contiguousLayout(l.Shape), s, l)
	return out.h
}
