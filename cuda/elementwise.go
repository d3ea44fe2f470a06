//go:build cuda

package cuda

import "github.com/wickml/wick/tensor"

// Unary writes op(src) into the contiguous dst. The 16-bit float dtypes'
// kernels compute in float32 and round once (csrc/elementwise.cu), as the
// CPU backend does; so do UnaryGrad's and Binary's (a comparison of 16-bit
// operands writes float32).
func (b *backend) Unary(op tensor.UnaryOp, p tensor.UnaryParams, dst, src tensor.Storage, sl tensor.Layout) {
	name := op.String()
	defer b.d.enter()()
	n := numel(sl.Shape)
	d, s := b.rows(name, dst, n), b.view(name, src, sl)
	defer keepAlive(d, s)
	if n == 0 {
		return
	}
	contig, strided := b.d.k.unaryContig, b.d.k.unary
	if h := b.d.k.half[s.dt]; h != nil {
		contig, strided = h.unaryContig, h.unary
	}
	if isContiguous(sl) {
		a := &args{}
		a.ptr(d.ptr(name, 0)).ptr(s.ptr(name, sl.Offset)).i64(n).i32(int(op)).f32(p.A).f32(p.B)
		b.d.launch1D(name, contig, n, a)
		return
	}
	forChunks(sl.Shape, [][]int{tensor.ContiguousStrides(sl.Shape), sl.Strides}, func(offs, shape []int, st [][]int) {
		a := &args{}
		a.ptr(d.ptr(name, offs[0])).ptr(s.ptr(name, sl.Offset+offs[1])).i64(numel(shape)).i32(int(op)).f32(p.A).f32(p.B).layout(shape, st[1])
		b.d.launch1D(name, strided, numel(shape), a)
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
	fn := b.d.k.unaryGrad
	if h := b.d.k.half[xs.dt]; h != nil {
		fn = h.unaryGrad
	}
	b.d.launch1D(name, fn, n, a)
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
	contig, fn, hasContig := b.d.k.binaryContig, b.d.k.binary, true
	switch h := b.d.k.half[xs.dt]; {
	case h != nil && d.dt == tensor.Float32: // a comparison
		contig, fn = h.compareContig, h.compare
	case h != nil:
		contig, fn = h.binaryContig, h.binary
	case xs.dt == tensor.Int64:
		fn, hasContig = b.d.k.compareI64, false
	}
	if hasContig && isContiguous(xl) && isContiguous(yl) {
		a := &args{}
		a.ptr(d.ptr(name, 0)).ptr(xs.ptr(name, xl.Offset)).ptr(ys.ptr(name, yl.Offset)).i64(n).i32(int(op))
		b.d.launch1D(name, contig, n, a)
		return
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
		fn := b.d.k.where
		if is16(xs.dt) {
			fn = b.d.k.whereU16 // the bit patterns
		}
		b.d.launch1D("Where", fn, numel(shape), a)
	})
}
