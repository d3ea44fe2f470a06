package tensor

// The CPU backend's row kernels on bfloat16 and float16 storages: the
// reductions, softmax, log-softmax, LayerNorm and RMSNorm take 16-bit
// inputs and outputs and compute in float32 (their sums in float64, as
// for float32), rounding each 16-bit output once, as PyTorch accumulates
// them in float32 (its acc_type). Statistics (mean, rstd) stay Float32.
// Each kernel widens its 16-bit operands to float32 copies, runs the
// float32 kernel and rounds back: the float32 results are unchanged.

// any16 reports whether any of the storages is 16-bit.
func any16(ss ...Storage) bool {
	for _, s := range ss {
		if s != nil && is16(s.DType()) {
			return true
		}
	}
	return false
}

// as32 returns a Float32 stand-in for the first n elements of s: s itself
// if it is not 16-bit (or nil), else a float32 copy (of its values when
// load is set: an input, or an output added into). done rounds the
// stand-in back into s.
func (b cpuBackend) as32(s Storage, n int, load bool) (w Storage, done func()) {
	if s == nil || !is16(s.DType()) {
		return s, func() {}
	}
	l := contiguousLayout([]int{n})
	w = b.AllocUninit(Float32, n)
	if load {
		b.Copy(w, l, s, l)
	}
	return w, func() { b.Copy(s, l, w, l) }
}

func (b cpuBackend) reduce16(op ReduceOp, dst, src Storage, sl Layout, dim int) {
	w, wl := b.widen(src, sl)
	n := numel(append(cloneInts(sl.Shape[:dim]), sl.Shape[dim+1:]...))
	d, done := b.as32(dst, n, false)
	b.Reduce(op, d, w, wl, dim)
	done()
}

func (b cpuBackend) softmax16(dst, src Storage, rows, cols int, log bool) {
	s, _ := b.as32(src, rows*cols, true)
	d, done := b.as32(dst, rows*cols, false)
	b.Softmax(d, s, rows, cols, log)
	done()
}

func (b cpuBackend) softmaxGrad16(dst, g, y Storage, rows, cols int, log bool) {
	gw, _ := b.as32(g, rows*cols, true)
	yw, _ := b.as32(y, rows*cols, true)
	d, done := b.as32(dst, rows*cols, false)
	b.SoftmaxGrad(d, gw, yw, rows, cols, log)
	done()
}

func (b cpuBackend) layerNorm16(dst, mean, rstd, x, w, bias Storage, rows, cols int, eps float32) {
	xw, _ := b.as32(x, rows*cols, true)
	ww, _ := b.as32(w, cols, true)
	bw, _ := b.as32(bias, cols, true)
	d, done := b.as32(dst, rows*cols, false)
	b.LayerNorm(d, mean, rstd, xw, ww, bw, rows, cols, eps)
	done()
}

func (b cpuBackend) layerNormGrad16(dx, dw, db, g, x, mean, rstd, w Storage, rows, cols int) {
	gw, _ := b.as32(g, rows*cols, true)
	xw, _ := b.as32(x, rows*cols, true)
	ww, _ := b.as32(w, cols, true)
	dxw, doneX := b.as32(dx, rows*cols, false)
	dww, doneW := b.as32(dw, cols, true)
	dbw, doneB := b.as32(db, cols, true)
	b.LayerNormGrad(dxw, dww, dbw, gw, xw, mean, rstd, ww, rows, cols)
	doneX()
	doneW()
	doneB()
}

func (b cpuBackend) rmsNorm16(dst, rstd, x, w Storage, rows, cols int, eps float32) {
	xw, _ := b.as32(x, rows*cols, true)
	ww, _ := b.as32(w, cols, true)
	d, done := b.as32(dst, rows*cols, false)
	b.RMSNorm(d, rstd, xw, ww, rows, cols, eps)
	done()
}

func (b cpuBackend) rmsNormGrad16(dx, dw, g, x, rstd, w Storage, rows, cols int) {
	gw, _ := b.as32(g, rows*cols, true)
	xw, _ := b.as32(x, rows*cols, true)
	ww, _ := b.as32(w, cols, true)
	dxw, doneX := b.as32(dx, rows*cols, false)
	dww, doneW := b.as32(dw, cols, true)
	b.RMSNormGrad(dxw, dww, gw, xw, rstd, ww, rows, cols)
	doneX()
	doneW()
}
