//go:build cuda

package cuda

import "github.com/wickml/wick/tensor"

// The row kernels on bfloat16 and float16 storages, as the CPU backend
// computes them (tensor/cpu16.go): the reductions, softmax, log-softmax,
// LayerNorm and RMSNorm read 16-bit inputs as float32 copies made on the
// device (exact), run the float32 kernels (sums in float64 or float32 as
// for float32 inputs, statistics kept Float32) and round each 16-bit
// output once. (Fused 16-bit loads would save the copies' memory traffic;
// the results would be the same.)

// any16 reports whether any of the storages is 16-bit.
func any16(ss ...tensor.Storage) bool {
	for _, s := range ss {
		if s != nil && is16(s.DType()) {
			return true
		}
	}
	return false
}

// as32 returns a Float32 stand-in for the first n elements of s: s itself
// if it is not 16-bit (or nil), else a float32 copy on the device (of its
// values when load is set: an input, or an output added into). done
// frees the stand-in, rounding it back into s first if store is set.
func (b *backend) as32(op string, s tensor.Storage, n int, load bool) (w tensor.Storage, done func(store bool)) {
	if s == nil || !is16(s.DType()) {
		return s, func(bool) {}
	}
	defer b.d.enter()()
	cs := b.rows(op, s, n)
	t := b.d.newStorage(op, tensor.Float32, n)
	l := contiguous([]int{n})
	if load {
		b.copy(op, t, l, cs, l)
	}
	return t, func(store bool) {
		defer b.d.enter()()
		if store {
			b.copy(op, cs, l, t, l)
		}
		t.Release()
	}
}

func (b *backend) reduce16(op tensor.ReduceOp, dst, src tensor.Storage, sl tensor.Layout, dim int) {
	const name = "Reduce"
	outShape := append(append([]int{}, sl.Shape[:dim]...), sl.Shape[dim+1:]...)
	var w tensor.Storage
	func() {
		defer b.d.enter()()
		s := b.view(name, src, sl)
		t := b.d.newStorage(name, tensor.Float32, numel(sl.Shape))
		b.copy(name, t, contiguous(sl.Shape), s, sl)
		w = t
	}()
	defer w.(*storage).Release()
	d, done := b.as32(name, dst, numel(outShape), false)
	b.Reduce(op, d, w, contiguous(sl.Shape), dim)
	done(true)
}

func (b *backend) softmax16(dst, src tensor.Storage, rows, cols int, log bool) {
	s, free := b.as32("Softmax", src, rows*cols, true)
	defer free(false)
	d, done := b.as32("Softmax", dst, rows*cols, false)
	b.Softmax(d, s, rows, cols, log)
	done(true)
}

func (b *backend) softmaxGrad16(dst, g, y tensor.Storage, rows, cols int, log bool) {
	gw, freeG := b.as32("SoftmaxGrad", g, rows*cols, true)
	defer freeG(false)
	yw, freeY := b.as32("SoftmaxGrad", y, rows*cols, true)
	defer freeY(false)
	d, done := b.as32("SoftmaxGrad", dst, rows*cols, false)
	b.SoftmaxGrad(d, gw, yw, rows, cols, log)
	done(true)
}

func (b *backend) layerNorm16(dst, mean, rstd, x, w, bias tensor.Storage, rows, cols int, eps float32) {
	const op = "LayerNorm"
	xw, freeX := b.as32(op, x, rows*cols, true)
	defer freeX(false)
	ww, freeW := b.as32(op, w, cols, true)
	defer freeW(false)
	bw, freeB := b.as32(op, bias, cols, true)
	defer freeB(false)
	d, done := b.as32(op, dst, rows*cols, false)
	b.LayerNorm(d, mean, rstd, xw, ww, bw, rows, cols, eps)
	done(true)
}

func (b *backend) layerNormGrad16(dx, dw, db, g, x, mean, rstd, w tensor.Storage, rows, cols int) {
	const op = "LayerNormGrad"
	gw, freeG := b.as32(op, g, rows*cols, true)
	defer freeG(false)
	xw, freeX := b.as32(op, x, rows*cols, true)
	defer freeX(false)
	ww, freeW := b.as32(op, w, cols, true)
	defer freeW(false)
	dxw, doneX := b.as32(op, dx, rows*cols, false)
	dww, doneW := b.as32(op, dw, cols, true)
	dbw, doneB := b.as32(op, db, cols, true)
	b.LayerNormGrad(dxw, dww, dbw, gw, xw, mean, rstd, ww, rows, cols)
	doneX(true)
	doneW(true)
	doneB(true)
}

func (b *backend) rmsNorm16(dst, rstd, x, w tensor.Storage, rows, cols int, eps float32) {
	const op = "RMSNorm"
	xw, freeX := b.as32(op, x, rows*cols, true)
	defer freeX(false)
	ww, freeW := b.as32(op, w, cols, true)
	defer freeW(false)
	d, done := b.as32(op, dst, rows*cols, false)
	b.RMSNorm(d, rstd, xw, ww, rows, cols, eps)
	done(true)
}

func (b *backend) rmsNormGrad16(dx, dw, g, x, rstd, w tensor.Storage, rows, cols int) {
	const op = "RMSNormGrad"
	gw, freeG := b.as32(op, g, rows*cols, true)
	defer freeG(false)
	xw, freeX := b.as32(op, x, rows*cols, true)
	defer freeX(false)
	ww, freeW := b.as32(op, w, cols, true)
	defer freeW(false)
	dxw, doneX := b.as32(op, dx, rows*cols, false)
	dww, doneW := b.as32(op, dw, cols, true)
	b.RMSNormGrad(dxw, dww, gw, xw, rstd, ww, rows, cols)
	doneX(true)
	doneW(true)
}
