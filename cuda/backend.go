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
func fromHost[T float32 | int64](b *backend, op string, dt tensor.DType, data []T) tensor.Storage {
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
	ptr, release := b.dense(op, cs, l)
	b.dtoh(op, unsafe.Pointer(&out[0]), ptr, int64(len(out))*int64(unsafe.Sizeof(out[0])))
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

// Unary writes op(src) into the contiguous dst.
func (b *backend) Unary(op tensor.UnaryOp, p tensor.UnaryParams, dst, src tensor.Storage, sl tensor.Layout) {
	name := op.String()
	defer b.d.enter()()
	n := numel(sl.Shape)
	d, s := b.rows(name, dst, n), b.view(name, src, sl)
	defer keepAlive(d, s)
	if n == 0 {
		return
	}
	if isContiguous(sl) {
		a := &args{}
		a.ptr(d.ptr(name, 0)).ptr(s.ptr(name, sl.Offset)).i64(n).i32(int(op)).f32(p.A).f32(p.B)
		b.d.launch1D(name, b.d.k.unaryContig, n, a)
		return
	}
	forChunks(sl.Shape, [][]int{tensor.ContiguousStrides(sl.Shape), sl.Strides}, func(offs, shape []int, st [][]int) {
		a := &args{}
		a.ptr(d.ptr(name, offs[0])).ptr(s.ptr(name, sl.Offset+offs[1])).i64(numel(shape)).i32(int(op)).f32(p.A).f32(p.B).layout(shape, st[1])
		b.d.launch1D(name, b.d.k.unary, numel(shape), a)
	})
}

// UnaryGrad writes g·op'(x) into dst (all contiguous, n elements).
func (b *backend) UnaryGrad(op tensor.UnaryOp, p tensor.UnaryParams, dst, g, x, y tensor.Storage, n int) {
	name := op.String() + "Grad"
	defer b.d.enter()()
	d, gs, xs, ys := b.rows(name, dst, n), b.rows(name, g, n), b.rows(name, x, n), b.rows(name, y, n)
	defer keepAlive(d, gs, xs, ys)
	a := &args{}
	a.ptr(d.ptr(name, 0)).ptr(gs.ptr(name, 0)).ptr(xs.ptr(name, 0)).ptr(ys.ptr(name, 0)).i64(n).i32(int(op)).f32(p.A).f32(p.B)
	b.d.launch1D(name, b.d.k.unaryGrad, n, a)
}

// Binary writes op(a, b) into the contiguous dst.
func (b *backend) Binary(op tensor.BinaryOp, dst, x tensor.Storage, xl tensor.Layout, y tensor.Storage, yl tensor.Layout) {
	name := op.String()
	defer b.d.enter()()
	n := numel(xl.Shape)
	d, xs, ys := b.rows(name, dst, n), b.view(name, x, xl), b.view(name, y, yl)
	defer keepAlive(d, xs, ys)
	if n == 0 {
		return
	}
	if xs.dt == tensor.Float32 && isContiguous(xl) && isContiguous(yl) {
		a := &args{}
		a.ptr(d.ptr(name, 0)).ptr(xs.ptr(name, xl.Offset)).ptr(ys.ptr(name, yl.Offset)).i64(n).i32(int(op))
		b.d.launch1D(name, b.d.k.binaryContig, n, a)
		return
	}
	fn := b.d.k.binary
	if xs.dt == tensor.Int64 {
		fn = b.d.k.compareI64
	}
	forChunks(xl.Shape, [][]int{tensor.ContiguousStrides(xl.Shape), xl.Strides, yl.Strides}, func(offs, shape []int, st [][]int) {
		a := &args{}
		a.ptr(d.ptr(name, offs[0])).ptr(xs.ptr(name, xl.Offset+offs[1])).ptr(ys.ptr(name, yl.Offset+offs[2])).i64(numel(shape)).i32(int(op)).layout(shape, st[1], st[2])
		b.d.launch1D(name, fn, numel(shape), a)
	})
}

// Where writes cond ? x : y into dst.
func (b *backend) Where(dst, cond tensor.Storage, cl tensor.Layout, x tensor.Storage, xl tensor.Layout, y tensor.Storage, yl tensor.Layout) {
	defer b.d.enter()()
	n := numel(cl.Shape)
	d, cs, xs, ys := b.rows("Where", dst, n), b.view("Where", cond, cl), b.view("Where", x, xl), b.view("Where", y, yl)
	defer keepAlive(d, cs, xs, ys)
	if n == 0 {
		return
	}
	forChunks(cl.Shape, [][]int{tensor.ContiguousStrides(cl.Shape), cl.Strides, xl.Strides, yl.Strides}, func(offs, shape []int, st [][]int) {
		a := &args{}
		a.ptr(d.ptr("Where", offs[0])).ptr(cs.ptr("Where", cl.Offset+offs[1])).ptr(xs.ptr("Where", xl.Offset+offs[2])).ptr(ys.ptr("Where", yl.Offset+offs[3]))
		a.i64(numel(shape)).layout(shape, st[1], st[2], st[3])
		b.d.launch1D("Where", b.d.k.where, numel(shape), a)
	})
}

var reduceNames = [...]string{"Sum", "Max", "Min", "ArgMax", "ArgMin", "LogSumExp"}

// Reduce reduces src along dim into the contiguous dst.
func (b *backend) Reduce(op tensor.ReduceOp, dst, src tensor.Storage, sl tensor.Layout, dim int) {
	name := "Reduce"
	if int(op) < len(reduceNames) {
		name = reduceNames[op]
	}
	defer b.d.enter()()
	outShape := append(append([]int{}, sl.Shape[:dim]...), sl.Shape[dim+1:]...)
	outStrides := append(append([]int{}, sl.Strides[:dim]...), sl.Strides[dim+1:]...)
	nout := numel(outShape)
	d, s := b.rows(name, dst, nout), b.view(name, src, sl)
	defer keepAlive(d, s)
	if nout == 0 {
		return
	}
	n, r := sl.Shape[dim], sl.Strides[dim]
	arg := op == tensor.ReduceArgMax || op == tensor.ReduceArgMin
	forChunks(outShape, [][]int{tensor.ContiguousStrides(outShape), outStrides}, func(offs, shape []int, st [][]int) {
		no := numel(shape)
		p := planReduce(no, n, r, op == tensor.ReduceLogSumExp)
		if p.kind == reduceSplit {
			b.reduceSplit(name, op, p, d.ptr(name, offs[0]), s.ptr(name, sl.Offset+offs[1]), no, n, r, shape, st[1])
			return
		}
		a := &args{}
		a.ptr(d.ptr(name, offs[0])).ptr(s.ptr(name, sl.Offset+offs[1])).i64(no).i64(n).i64(r).i32(int(op)).layout(shape, st[1])
		block := p.kind == reduceBlock
		var fn cu.Function
		switch {
		case arg && block:
			fn = b.d.k.argreduce
		case arg:
			fn = b.d.k.argreduceSmall
		case block:
			fn = b.d.k.reduce
		default:
			fn = b.d.k.reduceSmall
		}
		if block {
			b.d.launchRows(name, fn, no, a)
		} else {
			b.d.launch1D(name, fn, no, a)
		}
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

// reduceSplit runs a split reduction (planReduce): partials of p.chunks
// chunks per output, then their combination into dst (nout outputs, int64
// for argmax/argmin). src points at the first output's first element; the
// outputs have shape and source strides st.
func (b *backend) reduceSplit(name string, op tensor.ReduceOp, p reducePlan, dst, src cu.DevicePtr, nout, n, r int, shape, st []int) {
	arg := op == tensor.ReduceArgMax || op == tensor.ReduceArgMin
	parts := int64(p.chunks) * int64(nout)
	part := b.scratch(name, parts*8)
	defer b.d.alloc.put(part)
	var pidx cu.DevicePtr
	if arg {
		blk := b.scratch(name, parts*8)
		defer b.d.alloc.put(blk)
		pidx = cu.DevicePtr(blk.ptr)
	}
	a := &args{}
	a.ptr(cu.DevicePtr(part.ptr)).ptr(pidx).ptr(src).i64(nout).i64(n).i64(r).i32(int(op)).i64(p.chunk).i32(p.tx).layout(shape, st)
	b.d.launch(name, b.d.k.reducePart, (nout+p.tx-1)/p.tx, p.chunks, rowThreads, a)
	var df, di cu.DevicePtr = dst, 0
	if arg {
		df, di = 0, dst
	}
	a = &args{}
	a.ptr(df).ptr(di).ptr(cu.DevicePtr(part.ptr)).ptr(pidx).i64(nout).i64(p.chunks).i32(int(op)).i32(0)
	b.d.launch1D(name, b.d.k.reduceFinal, nout, a)
}

// MatMul writes x @ y into the contiguous dst with one strided-batched
// cuBLAS call (planMatMul), after copying to dense memory the operands
// the plan asks for.
func (b *backend) MatMul(dst, x tensor.Storage, xl tensor.Layout, y tensor.Storage, yl tensor.Layout) {
	const op = "MatMul"
	defer b.d.enter()()
	nd := len(xl.Shape)
	m, k, n := xl.Shape[nd-2], xl.Shape[nd-1], yl.Shape[nd-1]
	batch := xl.Shape[:nd-2]
	total := numel(batch) * m * n
	d, xs, ys := b.rows(op, dst, total), b.view(op, x, xl), b.view(op, y, yl)
	defer keepAlive(d, xs, ys)
	if total == 0 {
		return
	}
	if k == 0 {
		b.Fill(dst, contiguous(append(append([]int{}, batch...), m, n)), 0)
		return
	}
	denseX, denseY, call := planMatMul(xl, yl)
	var temps []*storage
	defer func() {
		for _, t := range temps {
			t.Release()
		}
	}()
	base := func(s *storage, l tensor.Layout, dense bool) cu.DevicePtr {
		if !dense {
			return s.ptr(op, 0)
		}
		t := b.d.newStorage(op, tensor.Float32, numel(l.Shape))
		temps = append(temps, t)
		b.copy(op, t, contiguous(l.Shape), s, l)
		return t.ptr(op, 0)
	}
	xp, yp := base(xs, xl, denseX), base(ys, yl, denseY)
	for _, v := range []int{call.m, call.n, call.k, call.lda, call.ldb, call.batch} {
		if v > math.MaxInt32 {
			panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("dims too large for cuBLAS: m=%d n=%d k=%d batch=%d", m, n, k, call.batch)})
		}
	}
	b.sgemm(op, call, yp, xp, d.ptr(op, 0))
	b.d.syncIfDebugging(op)
}

// sgemm runs one planned cuBLAS call on operands at the given base
// addresses (the call's offsets are in elements from them).
func (b *backend) sgemm(op string, c gemmCall, A, B, C cu.DevicePtr) {
	if tf := AllowTF32(); tf != b.d.blas.tf32 {
		if err := b.d.blas.setTF32(tf); err != nil {
			b.d.fail(op, "setting the math mode", err)
		}
	}
	at := func(p cu.DevicePtr, off int) cu.DevicePtr { return p + cu.DevicePtr(4*off) }
	err := b.d.blas.sgemm(c.transA, c.transB, c.m, c.n, c.k,
		at(A, c.a), c.lda, c.strideA, at(B, c.b), c.ldb, c.strideB, at(C, c.c), c.ldc, c.strideC, c.batch)
	if err != nil {
		b.d.fail(op, "cuBLAS", err)
	}
}

// Softmax writes softmax (or log-softmax) of each contiguous row.
func (b *backend) Softmax(dst, src tensor.Storage, rows, cols int, log bool) {
	op := opName("Softmax", log)
	defer b.d.enter()()
	d, s := b.rows(op, dst, rows*cols), b.rows(op, src, rows*cols)
	defer keepAlive(d, s)
	a := &args{}
	a.ptr(d.ptr(op, 0)).ptr(s.ptr(op, 0)).i64(rows).i64(cols).i32(boolInt(log))
	b.d.launchRows(op, b.d.k.softmax, rows, a)
}

// SoftmaxGrad writes the input gradient of (log-)softmax.
func (b *backend) SoftmaxGrad(dst, g, y tensor.Storage, rows, cols int, log bool) {
	op := opName("Softmax", log) + "Grad"
	defer b.d.enter()()
	d, gs, ys := b.rows(op, dst, rows*cols), b.rows(op, g, rows*cols), b.rows(op, y, rows*cols)
	defer keepAlive(d, gs, ys)
	a := &args{}
	a.ptr(d.ptr(op, 0)).ptr(gs.ptr(op, 0)).ptr(ys.ptr(op, 0)).i64(rows).i64(cols).i32(boolInt(log))
	b.d.launchRows(op, b.d.k.softmaxGrad, rows, a)
}

func opName(base string, log bool) string {
	if log {
		return "Log" + base
	}
	return base
}

// LayerNorm normalises each row, scales by w and shifts by b (either may
// be nil), saving each row's mean and reciprocal standard deviation.
func (b *backend) LayerNorm(dst, mean, rstd, x, w, bias tensor.Storage, rows, cols int, eps float32) {
	const op = "LayerNorm"
	defer b.d.enter()()
	d, ms, rs, xs := b.rows(op, dst, rows*cols), b.rows(op, mean, rows), b.rows(op, rstd, rows), b.rows(op, x, rows*cols)
	defer keepAlive(d, ms, rs, xs, w, bias)
	a := &args{}
	a.ptr(d.ptr(op, 0)).ptr(ms.ptr(op, 0)).ptr(rs.ptr(op, 0)).ptr(xs.ptr(op, 0))
	a.ptr(b.opt(op, w, cols)).ptr(b.opt(op, bias, cols)).i64(rows).i64(cols).f32(eps)
	b.d.launchRows(op, b.d.k.layernorm, rows, a)
}

// LayerNormGrad writes dx and adds into dw, db (each nil if not wanted).
// Like the CPU reference it recomputes each row's mean in double (the saved
// float mean is not used). dw and db are column sums over all rows, formed
// in two stages: partial sums over chunks of rows (in double, in a scratch
// block), then their sum.
func (b *backend) LayerNormGrad(dx, dw, db, g, x, mean, rstd, w tensor.Storage, rows, cols int) {
	const op = "LayerNormGrad"
	defer b.d.enter()()
	gs, xs, rs := b.rows(op, g, rows*cols), b.rows(op, x, rows*cols), b.rows(op, rstd, rows)
	defer keepAlive(dx, dw, db, gs, xs, mean, rs, w)
	if rows == 0 || cols == 0 || (dx == nil && dw == nil && db == nil) {
		return
	}
	// scratch blocks go back to the cache at once: later users queue
	// behind these kernels on the stream
	mu := b.scratch(op, int64(rows)*8)
	defer b.d.alloc.put(mu)
	a := &args{}
	a.ptr(cu.DevicePtr(mu.ptr)).ptr(xs.ptr(op, 0)).i64(rows).i64(cols)
	b.d.launchRows(op, b.d.k.layernormMu, rows, a)
	if dx != nil {
		a := &args{}
		a.ptr(b.opt(op, dx, rows*cols)).ptr(gs.ptr(op, 0)).ptr(xs.ptr(op, 0)).ptr(cu.DevicePtr(mu.ptr)).ptr(rs.ptr(op, 0)).ptr(b.opt(op, w, cols)).i64(rows).i64(cols)
		b.d.launchRows(op, b.d.k.layernormDx, rows, a)
	}
	if dw == nil && db == nil {
		return
	}
	chunk := max(32, (rows*cols+65535)/65536, (rows+65534)/65535)
	chunks := (rows + chunk - 1) / chunk
	part := b.scratch(op, int64(chunks)*2*int64(cols)*8)
	defer b.d.alloc.put(part)
	a = &args{}
	a.ptr(cu.DevicePtr(part.ptr)).ptr(gs.ptr(op, 0)).ptr(xs.ptr(op, 0)).ptr(cu.DevicePtr(mu.ptr)).ptr(rs.ptr(op, 0)).i64(rows).i64(cols).i64(chunk)
	b.d.launch(op, b.d.k.lnPart, (cols+threads-1)/threads, chunks, threads, a)
	a = &args{}
	a.ptr(b.opt(op, dw, cols)).ptr(b.opt(op, db, cols)).ptr(cu.DevicePtr(part.ptr)).i64(chunks).i64(cols)
	b.d.launch1D(op, b.d.k.lnSum, cols, a)
}

// Gather copies rows idx[i] of src into row i of dst.
func (b *backend) Gather(dst, src, idx tensor.Storage, n, rowLen int) {
	const op = "Embedding"
	defer b.d.enter()()
	d, s, ix := b.rows(op, dst, n*rowLen), b.st(op, src), b.rows(op, idx, n)
	defer keepAlive(d, s, ix)
	if n == 0 || rowLen == 0 {
		return
	}
	a := &args{}
	a.ptr(d.ptr(op, 0)).ptr(s.ptr(op, 0)).ptr(ix.ptr(op, 0)).i64(n).i64(rowLen).i64(s.n / rowLen)
	b.d.launch1D(op, b.d.k.gather, n*rowLen, a)
}

// ScatterAdd adds row i of src into row idx[i] of dst.
func (b *backend) ScatterAdd(dst, idx, src tensor.Storage, n, rowLen int) {
	const op = "EmbeddingGrad"
	defer b.d.enter()()
	d, ix, s := b.st(op, dst), b.rows(op, idx, n), b.rows(op, src, n*rowLen)
	defer keepAlive(d, ix, s)
	if n == 0 || rowLen == 0 {
		return
	}
	a := &args{}
	a.ptr(d.ptr(op, 0)).ptr(ix.ptr(op, 0)).ptr(s.ptr(op, 0)).i64(n).i64(rowLen).i64(d.n / rowLen)
	b.d.launch1D(op, b.d.k.scatterAdd, n*rowLen, a)
}

// CrossEntropy writes each row's loss (0 for ignored rows).
func (b *backend) CrossEntropy(loss, logits, targets tensor.Storage, rows, cols int, ignore int64) {
	const op = "CrossEntropy"
	defer b.d.enter()()
	l, x, t := b.rows(op, loss, rows), b.rows(op, logits, rows*cols), b.rows(op, targets, rows)
	defer keepAlive(l, x, t)
	a := &args{}
	a.ptr(l.ptr(op, 0)).ptr(x.ptr(op, 0)).ptr(t.ptr(op, 0)).i64(rows).i64(cols).u64(uint64(ignore))
	b.d.launchRows(op, b.d.k.crossEntropy, rows, a)
}

// CrossEntropyGrad writes scale·(softmax(logits) − onehot(target)) per row.
func (b *backend) CrossEntropyGrad(dst, logits, targets tensor.Storage, rows, cols int, ignore int64, scale float32) {
	const op = "CrossEntropyGrad"
	defer b.d.enter()()
	d, x, t := b.rows(op, dst, rows*cols), b.rows(op, logits, rows*cols), b.rows(op, targets, rows)
	defer keepAlive(d, x, t)
	a := &args{}
	a.ptr(d.ptr(op, 0)).ptr(x.ptr(op, 0)).ptr(t.ptr(op, 0)).i64(rows).i64(cols).u64(uint64(ignore)).f32(scale)
	b.d.launchRows(op, b.d.k.crossEntropyGrad, rows, a)
}

// AdamW updates param, m and v in place from grad with PyTorch's rule; the
// scalars are formed as the CPU backend forms them.
func (b *backend) AdamW(param, grad, m, v tensor.Storage, n int, c tensor.AdamWStep) {
	const op = "AdamW"
	defer b.d.enter()()
	p, g, ms, vs := b.rows(op, param, n), b.rows(op, grad, n), b.rows(op, m, n), b.rows(op, v, n)
	defer keepAlive(p, g, ms, vs)
	bc1 := 1 - math.Pow(c.Beta1, float64(c.Step))
	bc2 := 1 - math.Pow(c.Beta2, float64(c.Step))
	a := &args{}
	a.ptr(p.ptr(op, 0)).ptr(g.ptr(op, 0)).ptr(ms.ptr(op, 0)).ptr(vs.ptr(op, 0)).i64(n)
	a.f32(float32(c.Beta1)).f32(float32(c.Beta2)).f32(float32(1 - c.Beta1)).f32(float32(1 - c.Beta2))
	a.f32(float32(c.LR / bc1)).f32(float32(math.Sqrt(bc2))).f32(float32(1 - c.LR*c.WeightDecay)).f32(float32(c.Eps))
	b.d.launch1D(op, b.d.k.adamw, n, a)
}
