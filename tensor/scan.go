package tensor

// scan runs the backend's Scan along dim d of t (moved last and made
// contiguous), without recording; it returns the result in the moved
// layout together with the moved input and the way back.
func (t *Tensor) scan(op ScanOp, d int, reverse bool) (y, x *Tensor, back func(*Tensor) *Tensor) {
	x, back = t.moveToLast(d)
	cols := 1
	if x.Dim() > 0 {
		cols = x.layout.Shape[x.Dim()-1]
	}
	rows := x.Numel() / max(cols, 1)
	y = emptyOut(op.String(), t.backend, Float32, x.layout.Shape)
	if x.Numel() > 0 {
		t.backend.Scan(op, y.storage, x.storage, rows, cols, reverse)
	}
	return y, x, back
}

// scanLast is the scan along the last dim for backward passes (not
// recorded).
func (t *Tensor) scanLast(op ScanOp, reverse bool) *Tensor {
	y, _, _ := t.scan(op, max(t.Dim()-1, 0), reverse)
	return y
}

func (t *Tensor) cumulative(op ScanOp, dim int, backward func(g, x, y *Tensor) *Tensor) *Tensor {
	name := op.String()
	if is16(t.DType()) {
		return widened(t, func(x *Tensor) *Tensor { return x.cumulative(op, dim, backward) })
	}
	mustFloat(name, t)
	d := indexDim(name, t, dim)
	checkAlloc(name, Float32, t.layout.Shape) // before moveToLast's copy
	if t.Dim() == 0 {
		return t.Reshape(1).cumulative(op, 0, backward).Reshape()
	}
	y, x, back := t.scan(op, d, false)
	record(name, y, []*Tensor{x}, func(g *Tensor) { x.accumulate(backward(g.dense(), x, y)) })
	return back(y).Contiguous()
}

// Cumsum returns the running sums of t along dim (torch.cumsum):
// out[..., i, ...] = Σ_{j ≤ i} t[..., j, ...]. Each sum is accumulated in
// float64 and rounded once, as PyTorch's CPU kernel does. The result is
// contiguous; the gradient is the running sum of the output's gradient from
// the end. Cumsum panics with an *Error if t is not a float tensor or dim
// is out of range.
func (t *Tensor) Cumsum(dim int) *Tensor {
	return t.cumulative(ScanSum, dim, func(g, _, _ *Tensor) *Tensor { return g.scanLast(ScanSum, true) })
}

// Cumprod returns the running products of t along dim (torch.cumprod):
// out[..., i, ...] = Π_{j ≤ i} t[..., j, ...], accumulated in float64 and
// rounded once. The gradient is PyTorch's, zeros included: at a position i
// before the first zero of its line it is Σ_{j ≥ i} g_j·out_j / t_i, at
// the first zero it is Σ_{j ≥ i} g_j·Π_{m ≤ j, m ≠ i} t_m, and after it 0
// (no division by zero anywhere). The result is contiguous. Cumprod panics
// like Cumsum.
func (t *Tensor) Cumprod(dim int) *Tensor {
	return t.cumulative(ScanProd, dim, cumprodGrad)
}

// cumprodGrad is Cumprod's input gradient along the last dim of the
// contiguous x, given the output y and its gradient g (PyTorch's
// cumprod_backward for first-order gradients).
func cumprodGrad(g, x, y *Tensor) *Tensor {
	zero := scalarLike(x, 0)
	isZero := x.Eq(zero)
	zeros := isZero.scanLast(ScanSum, false) // zeros at or before each position
	before := zeros.Eq(zero)                 // positions before the line's first zero
	// before the first zero: Σ_{j ≥ i} g_j·y_j / x_i
	w := Where(before, g.Mul(y), zero)
	dx := Where(before, w.scanLast(ScanSum, true).Div(x), zero)
	// at the first zero: Σ_{j ≥ i} g_j·Π_{m ≤ j, m ≠ i} x_m, the products
	// formed with the zero replaced by 1 (a later zero ends them)
	first := isZero.Mul(zeros.Eq(scalarLike(x, 1)))
	skip := Where(first, scalarLike(x, 1), x).scanLast(ScanProd, false)
	after := before.Eq(zero)
	s := Where(after, g.Mul(skip), zero).SumKeepDim(x.Dim() - 1)
	return Where(first, s, dx)
}
