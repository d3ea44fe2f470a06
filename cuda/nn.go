//go:build cuda

package cuda

import (
	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

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
	fn := b.d.k.gather
	if is16(s.dt) {
		fn = b.d.k.gatherU16 // the rows' bit patterns
	}
	a := &args{}
	a.ptr(d.ptr(op, 0)).ptr(s.ptr(op, 0)).ptr(ix.ptr(op, 0)).i64(n).i64(rowLen).i64(s.n / rowLen)
	b.d.launch1D(op, fn, n*rowLen, a)
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
