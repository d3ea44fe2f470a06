package tensor

// MatMul returns the matrix product with torch.matmul's rules: 1-D·1-D is a
// dot product (0-d), a 1-D left operand is a row vector and a 1-D right
// operand a column vector (the added dimension is removed again), and for
// N-D operands the last two dims are multiplied while the batch dims
// broadcast.
func (t *Tensor) MatMul(o *Tensor) *Tensor {
	sameDevice("MatMul", t, o)
	mustFloat("MatMul", t, o)
	if t.Dim() == 0 || o.Dim() == 0 {
		panicf("MatMul", "both arguments need at least 1 dimension, got shapes %v and %v", t.layout.Shape, o.layout.Shape)
	}
	a, b := t, o
	if a.Dim() == 1 {
		a = a.Unsqueeze(0)
	}
	if b.Dim() == 1 {
		b = b.Unsqueeze(-1)
	}
	var out *Tensor
	if a.Dim() > 2 && b.Dim() == 2 {
		// fold the batch dims of a into its rows: one large product
		// instead of many small ones, and a weight gradient without a
		// batch of partial products to sum
		lead := a.layout.Shape[:a.Dim()-1]
		rows := a.Reshape(-1, a.layout.Shape[a.Dim()-1])
		out = matmul(rows, b, t.layout.Shape, o.layout.Shape).View(append(cloneInts(lead), b.layout.Shape[1])...)
	} else {
		out = matmul(a, b, t.layout.Shape, o.layout.Shape)
	}
	switch {
	case t.Dim() == 1 && o.Dim() == 1:
		return out.Reshape()
	case t.Dim() == 1:
		return out.Squeeze(-2)
	case o.Dim() == 1:
		return out.Squeeze(-1)
	}
	return out
}

// storedTransposed reports whether t's matrices are column-major (unit
// stride down the rows, as in the Transpose of a contiguous matrix) and
// more than a row or column.
func storedTransposed(t *Tensor) bool {
	nd := t.Dim()
	rows, cols := t.layout.Shape[nd-2], t.layout.Shape[nd-1]
	return rows > 1 && cols > 1 && t.layout.Strides[nd-2] == 1 && t.layout.Strides[nd-1] != 1
}

// matmul multiplies operands of at least two dims with broadcast batch
// dims. origA and origB are the user's shapes, for messages.
func matmul(a, b *Tensor, origA, origB []int) *Tensor {
	return matmulWith(a, b, origA, origB, a.backend.MatMul)
}

// matmulWith is matmul computing the product with kernel (a backend's
// MatMul or another kernel of its signature); the backward pass uses
// matmul.
func matmulWith(a, b *Tensor, origA, origB []int, kernel func(dst, a Storage, al Layout, b Storage, bl Layout)) *Tensor {
	na, nb := a.Dim(), b.Dim()
	m, k := a.layout.Shape[na-2], a.layout.Shape[na-1]
	k2, n := b.layout.Shape[nb-2], b.layout.Shape[nb-1]
	if k != k2 {
		panicf("MatMul", "shapes %v and %v are not compatible (inner dims %d != %d)", origA, origB, k, k2)
	}
	batch, ok := BroadcastShapes(a.layout.Shape[:na-2], b.layout.Shape[:nb-2])
	if !ok {
		panicf("MatMul", "batch dims of shapes %v and %v cannot be broadcast together", origA, origB)
	}
	al, _ := a.layout.broadcastTo(append(cloneInts(batch), m, k))
	bl, _ := b.layout.broadcastTo(append(cloneInts(batch), k, n))
	out := emptyOut("MatMul", a.backend, Float32, append(cloneInts(batch), m, n))
	switch {
	case out.Numel() == 0: // nothing to compute (a [1, 0] sequence's attention)
	case k == 0: // sums of no products, as in PyTorch
		a.backend.Fill(out.storage, out.layout, 0)
	default:
		kernel(out.storage, a.storage, al, b.storage, bl)
	}
	record("MatMul", out, []*Tensor{a, b}, func(g *Tensor) {
		// an operand stored transposed (Linear's Wᵀ) gets its gradient
		// computed transposed, (Bᵀ·Gᵀ)ᵀ for a and (Gᵀ·A)ᵀ for b: the
		// view is then the transpose of a contiguous product, and the
		// gradient reaching the stored tensor is contiguous (no strided
		// copy when a leaf clones it)
		if a.requiresGrad {
			if storedTransposed(a) {
				a.accumulate(matmul(b.Detach(), g.Transpose(-1, -2), b.layout.Shape, g.layout.Shape).Transpose(-1, -2))
			} else {
				a.accumulate(matmul(g, b.Detach().Transpose(-1, -2), g.layout.Shape, b.layout.Shape))
			}
		}
		if b.requiresGrad {
			if storedTransposed(b) {
				b.accumulate(matmul(g.Transpose(-1, -2), a.Detach(), g.layout.Shape, a.layout.Shape).Transpose(-1, -2))
			} else {
				b.accumulate(matmul(a.Detach().Transpose(-1, -2), g, a.layout.Shape, g.layout.Shape))
			}
		}
	})
	return out
}
