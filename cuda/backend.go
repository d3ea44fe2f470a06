//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

// backend implements tensor.Backend on one GPU. Every primitive runs as
// kernels (csrc/) or cuBLAS calls queued on the device's stream; only the
// host copies (Float32s, Int64s) wait for the stream. Nothing falls back to
// the CPU.
//
// This file holds the type, storage checks, allocation, host transfers,
// Copy and Fill; the ops are split by concept as the CPU backend's are:
// elementwise.go, reduce.go, matmul.go, nn.go (softmax, layer norm,
// embedding, cross-entropy), attention.go, norm.go, adamw.go, random.go,
// sort.go, scan.go.
type backend struct{ d *device }

var _ tensor.Backend = (*backend)(nil)

// Device returns the GPU the backend runs on.
func (b *backend) Device() tensor.Device { return tensor.CUDA(b.d.index) }

// st returns s as a storage of this device, panicking with op's name if it
// is not one.
func (b *backend) st(op string, s tensor.Storage) *storage {
	cs, ok := s.(*storage)
	if !ok || cs.d != b.d {
		dev := "nil"
		if s != nil {
			dev = s.Device().String()
		}
		panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("expected a storage on %s, got one on %s", b.Device(), dev)})
	}
	return cs
}

// view returns s as a storage of this device after checking that every
// element of layout l lies inside it.
func (b *backend) view(op string, s tensor.Storage, l tensor.Layout) *storage {
	cs := b.st(op, s)
	if numel(l.Shape) == 0 {
		return cs
	}
	lo, hi := l.Offset, l.Offset
	for i, n := range l.Shape {
		if n > 1 {
			if st := l.Strides[i]; st < 0 {
				lo += (n - 1) * st
			} else {
				hi += (n - 1) * st
			}
		}
	}
	if lo < 0 || hi >= cs.n {
		panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("view (shape %v, strides %v, offset %d) reaches outside its storage of %d elements", l.Shape, l.Strides, l.Offset, cs.n)})
	}
	return cs
}

// rows checks that a contiguous storage has at least n elements.
func (b *backend) rows(op string, s tensor.Storage, n int) *storage {
	cs := b.st(op, s)
	if cs.n < n {
		panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("storage of %d elements is smaller than the %d elements needed", cs.n, n)})
	}
	return cs
}

// opt is rows for an optional storage: nil gives a null pointer.
func (b *backend) opt(op string, s tensor.Storage, n int) cu.DevicePtr {
	if s == nil {
		return 0
	}
	return b.rows(op, s, n).ptr(op, 0)
}

// keepAlive keeps its arguments reachable until the deferred call runs:
// storages must not be reclaimed (and their blocks handed out again) while
// a method still has to queue kernels on them.
func keepAlive(xs ...any) {
	for _, x := range xs {
		runtime.KeepAlive(x)
	}
}

func isContiguous(l tensor.Layout) bool { return l.IsContiguous() }

// Alloc returns a zero-filled storage of n elements.
func (b *backend) Alloc(dt tensor.DType, n int) tensor.Storage {
	defer b.d.enter()()
	s := b.d.newStorage("Alloc", dt, n)
	if n > 0 {
		if err := cu.MemsetD8Async(s.ptr("Alloc", 0), 0, int64(n)*elemSize(dt), b.d.stream); err != nil {
			b.d.fail("Alloc", "zero-filling", err)
		}
	}
	return s
}

// FromFloat32s copies host data into a new storage.
func (b *backend) FromFloat32s(data []float32) tensor.Storage {
	return fromHost(b, "FromFloat32s", tensor.Float32, data)
}

// FromInt64s copies host data into a new storage.
func (b *backend) FromInt64s(data []int64) tensor.Storage {
	return fromHost(b, "FromInt64s", tensor.Int64, data)
}

// fromHost copies host data of dtype dt into a new storage.
func fromHost[T float32 | int64 | uint16](b *backend, op string, dt tensor.DType, data []T) tensor.Storage {
	defer b.d.enter()()
	s := b.d.newStorage(op, dt, len(data))
	if len(data) > 0 {
		b.htod(op, s.ptr(op, 0), unsafe.Pointer(&data[0]), int64(len(data))*elemSize(dt))
	}
	runtime.KeepAlive(data)
	return s
}

// htod copies host memory to the device. The copy is queued on the stream,
// through the device's pinned staging buffers (staging.go): when it
// returns, the host bytes have been read, so the caller may reuse them and
// the garbage collector may reclaim them.
func (b *backend) htod(op string, dst cu.DevicePtr, src unsafe.Pointer, bytes int64) {
	b.d.copies.Add(1)
	if err := b.d.staging.copy(b.d.stream, dst, src, bytes); err != nil {
		b.d.fail(op, "copying to the device", err)
	}
}

// dtoh copies device memory to the host and waits for it (and for every
// operation queued before it).
func (b *backend) dtoh(op string, dst unsafe.Pointer, src cu.DevicePtr, bytes int64) {
	b.d.copies.Add(1)
	if err := cu.MemcpyDtoHAsync(dst, src, bytes, b.d.stream); err != nil {
		b.d.fail(op, "copying to the host", err)
	}
	if err := b.d.stream.Synchronize(); err != nil {
		b.d.fail(op, "waiting for the device (an earlier kernel failed; set WICK_CUDA_SYNC=1 to find which)", err)
	}
}

// dense returns a contiguous copy of the view, or the view's own memory if
// it is contiguous already; release frees the copy.
func (b *backend) dense(op string, s *storage, l tensor.Layout) (ptr cu.DevicePtr, release func()) {
	if isContiguous(l) {
		return s.ptr(op, l.Offset), func() {}
	}
	tmp := b.d.newStorage(op, s.dt, numel(l.Shape))
	b.copy(op, tmp, contiguous(l.Shape), s, l)
	return tmp.ptr(op, 0), tmp.Release
}

func contiguous(shape []int) tensor.Layout {
	return tensor.Layout{Shape: shape, Strides: tensor.ContiguousStrides(shape)}
}

// Float32s copies the elements of a view to the host in row-major order.
func (b *backend) Float32s(s tensor.Storage, l tensor.Layout) []float32 {
	return toHost[float32](b, "Float32s", s, l)
}

// Int64s copies the elements of a view to the host in row-major order.
func (b *backend) Int64s(s tensor.Storage, l tensor.Layout) []int64 {
	return toHost[int64](b, "Int64s", s, l)
}

// toHost copies the elements of a view to the host in row-major order.
func toHost[T float32 | int64](b *backend, op string, s tensor.Storage, l tensor.Layout) []T {
	defer b.d.enter()()
	cs := b.view(op, s, l)
	defer keepAlive(cs)
	out := make([]T, numel(l.Shape))
	if len(out) == 0 {
		return out
	}
	var ptr cu.DevicePtr
	release := func() {}
	if dt := hostDType[T](); cs.dt != dt {
		// a 16-bit (or other) storage read as float32 or int64: converted
		// on the device, as the CPU backend's Copy converts
		tmp := b.d.newStorage(op, dt, len(out))
		b.copy(op, tmp, contiguous(l.Shape), cs, l)
		ptr, release = tmp.ptr(op, 0), tmp.Release
	} else {
		ptr, release = b.dense(op, cs, l)
	}
	b.dtoh(op, unsafe.Pointer(&out[0]), ptr, int64(len(out))*int64(unsafe.Sizeof(out[0])))
	release()
	return out
}

// hostDType is the dtype of a host element type.
func hostDType[T float32 | int64 | uint16]() tensor.DType {
	var z T
	switch any(z).(type) {
	case float32:
		return tensor.Float32
	case int64:
		return tensor.Int64
	}
	panic("hostDType: a 16-bit element has two dtypes")
}

// FromBits16 copies the bit patterns of 16-bit floats (dt BFloat16 or
// Float16) into a new storage (tensor.Backend16).
func (b *backend) FromBits16(dt tensor.DType, data []uint16) tensor.Storage {
	if !is16(dt) {
		panic(&tensor.Error{Op: "FromBits16", Msg: fmt.Sprintf("want BFloat16 or Float16, got %s", dt)})
	}
	return fromHost(b, "FromBits16", dt, data)
}

// Bits16 copies the bit patterns of a 16-bit view to the host in row-major
// order (tensor.Backend16).
func (b *backend) Bits16(s tensor.Storage, l tensor.Layout) []uint16 {
	const op = "Bits16"
	defer b.d.enter()()
	cs := b.view(op, s, l)
	defer keepAlive(cs)
	if !is16(cs.dt) {
		panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("want a bfloat16 or float16 storage, got %s", cs.dt)})
	}
	out := make([]uint16, numel(l.Shape))
	if len(out) == 0 {
		return out
	}
	ptr, release := b.dense(op, cs, l)
	b.dtoh(op, unsafe.Pointer(&out[0]), ptr, int64(len(out))*2)
	release()
	return out
}

// Copy copies src into dst (same shape), converting the dtype if needed.
func (b *backend) Copy(dst tensor.Storage, dl tensor.Layout, src tensor.Storage, sl tensor.Layout) {
	defer b.d.enter()()
	d, s := b.view("Copy", dst, dl), b.view("Copy", src, sl)
	defer keepAlive(d, s)
	b.copy("Copy", d, dl, s, sl)
}

// copy copies the view sl of s into the view dl of d. Overlapping views
// of one storage go through a temporary: cuMemcpyDtoDAsync and the copy
// kernels are undefined when source and destination overlap (threads run
// in any order).
func (b *backend) copy(op string, d *storage, dl tensor.Layout, s *storage, sl tensor.Layout) {
	n := numel(dl.Shape)
	if n == 0 {
		return
	}
	if d == s && dl.Overlaps(sl) {
		if slices.Equal(dl.Shape, sl.Shape) && slices.Equal(dl.Strides, sl.Strides) && dl.Offset == sl.Offset {
			return // each element onto itself
		}
		tmp := b.d.newStorage(op, s.dt, n)
		defer tmp.Release()
		tl := contiguous(sl.Shape)
		b.copy(op, tmp, tl, s, sl)
		b.copy(op, d, dl, tmp, tl)
		return
	}
	if d.dt == s.dt && isContiguous(dl) && isContiguous(sl) {
		err := cu.MemcpyDtoDAsync(d.ptr(op, dl.Offset), s.ptr(op, sl.Offset), int64(n)*elemSize(d.dt), b.d.stream)
		if err != nil {
			b.d.fail(op, "device copy", err)
		}
		return
	}
	var fn cu.Function
	switch {
	case d.dt == tensor.Float32 && s.dt == tensor.Float32:
		fn = b.d.k.copyF32
	case d.dt == tensor.Int64 && s.dt == tensor.Int64:
		fn = b.d.k.copyI64
	case d.dt == s.dt: // BFloat16 or Float16: the bit patterns
		fn = b.d.k.copyU16
	case is16(d.dt) || is16(s.dt):
		fn = b.d.k.casts[[2]tensor.DType{s.dt, d.dt}]
	case d.dt == tensor.Float32:
		fn = b.d.k.castI64F32
	default:
		fn = b.d.k.castF32I64
	}
	forChunks(dl.Shape, [][]int{dl.Strides, sl.Strides}, func(offs, shape []int, st [][]int) {
		a := &args{}
		a.ptr(d.ptr(op, dl.Offset+offs[0])).ptr(s.ptr(op, sl.Offset+offs[1])).i64(numel(shape)).layout(shape, st...)
		b.d.launch1D(op, fn, numel(shape), a)
	})
}

// Fill sets every element of the view to v.
func (b *backend) Fill(dst tensor.Storage, dl tensor.Layout, v float64) {
	defer b.d.enter()()
	d := b.view("Fill", dst, dl)
	defer keepAlive(d)
	n := numel(dl.Shape)
	if n == 0 {
		return
	}
	if is16(d.dt) {
		bits := tensor.BF16FromFloat32(float32(v))
		if d.dt == tensor.Float16 {
			bits = tensor.F16FromFloat32(float32(v))
		}
		forChunks(dl.Shape, [][]int{dl.Strides}, func(offs, shape []int, st [][]int) {
			a := &args{}
			a.ptr(d.ptr("Fill", dl.Offset+offs[0])).u64(uint64(bits)).i64(numel(shape)).layout(shape, st...)
			b.d.launch1D("Fill", b.d.k.fillU16, numel(shape), a)
		})
		return
	}
	if isContiguous(dl) && (d.dt == tensor.Float32 || tensor.ToInt64(v) == 0) {
		var err error
		if d.dt == tensor.Float32 {
			err = cu.MemsetD32Async(d.ptr("Fill", dl.Offset), uint(math.Float32bits(float32(v))), int64(n), b.d.stream)
		} else {
			err = cu.MemsetD8Async(d.ptr("Fill", dl.Offset), 0, int64(n)*8, b.d.stream)
		}
		if err != nil {
			b.d.fail("Fill", "memset", err)
		}
		return
	}
	forChunks(dl.Shape, [][]int{dl.Strides}, func(offs, shape []int, st [][]int) {
		a := &args{}
		a.ptr(d.ptr("Fill", dl.Offset+offs[0]))
		fn := b.d.k.fillF32
		if d.dt == tensor.Int64 {
			fn = b.d.k.fillI64
			a.u64(uint64(tensor.ToInt64(v)))
		} else {
			a.f32(float32(v))
		}
		a.i64(numel(shape)).layout(shape, st...)
		b.d.launch1D("Fill", fn, numel(shape), a)
	})
}

// scratch returns a device block of at least bytes bytes for partial
// results; hand it back with b.d.alloc.put as soon as the kernels that use
// it are queued (later users queue behind them on the stream).
func (b *backend) scratch(op string, bytes int64) *block {
	blk, err := b.d.alloc.block(bytes)
	if err != nil {
		b.d.fail(op, "device memory for scratch", err)
	}
	return blk
}
