package tensor

import "slices"

// MatMul returns the matrix product with torch.matmul's rules: 1-D·1-D is a
// dot product (0-d), a 1-D left operand is a row vector and a 1-D right
// operand a column vector (the added dimension is removed again), and for
// N-D operands the last two dims are multiplied while the batch dims
// broadcast.
//
// On the CPU the operands may be BFloat16 or Float16 as well as Float32.
// The products are summed in float32 and the result has the operands'
// dtype when they share one (bfloat16 × bfloat16 is bfloat16, rounded once,
// as in PyTorch); mixed dtypes give Float32 (PyTorch refuses them: Wick
// takes a bfloat16 weight times float32 activations without a cast of the
// activations, and the gradients come back in each operand's dtype).
// BFloat16 products run on the CPU's AVX512_BF16 dot-product instructions
// where it has them, and are otherwise widened to float32 in blocks (never
// slower than the float32 product, bar the widening).
//
// Inside Autocast(BFloat16, …) on the calling goroutine, float32 operands
// are rounded to bfloat16 (a parameter once per region), the product sums
// in float32 and the result is Float32; see Autocast.
func (t *Tensor) MatMul(o *Tensor) *Tensor {
	sameDevice("MatMul", t, o)
	mustFloating("MatMul", t, o)
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
		out = product(rows, b, t.layout.Shape, o.layout.Shape).View(append(cloneInts(lead), b.layout.Shape[1])...)
	} else {
		out = product(a, b, t.layout.Shape, o.layout.Shape)
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

// product is matmul, or the autocast region's product where the calling
// goroutine is inside Autocast (autocast.go).
func product(a, b *Tensor, origA, origB []int) *Tensor {
	if r := autocastFor(a, b); r != nil {
		return r.matmul(a, b, origA, origB)
	}
	return matmul(a, b, origA, origB)
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
	dt := a.DType()
	if b.DType() != dt {
		dt = Float32
	}
	return matmulTo(a, b, origA, origB, dt, kernel)
}

// matmulTo is matmulWith with a result of dtype dt.
func matmulTo(a, b *Tensor, origA, origB []int, dt DType, kernel func(dst, a Storage, al Layout, b Storage, bl Layout)) *Tensor {
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
	out := emptyOut("MatMul", a.backend, dt, append(cloneInts(batch), m, n))
	switch {
	case out.Numel() == 0: // nothing to compute (a [1, 0] sequence's attention)
	case k == 0: // sums of no products, as in PyTorch
		a.backend.Fill(out.storage, out.layout, 0)
	default:
		kernel(out.storage, a.storage, al, b.storage, bl)
	}
	// the closure keeps an operand's data only where the other operand's
	// gradient reads it: a product with a frozen weight (LoRA's base, a
	// model under inference with a grad-requiring input) keeps no input
	as, bs := a.sink(), b.sink()
	aT, bT := storedTransposed(a), storedTransposed(b)
	var ad, bd *Tensor
	if b.requiresGrad {
		ad = a.Detach()
	}
	if a.requiresGrad {
		bd = b.Detach()
	}
	record("MatMul", out, []*Tensor{a, b}, func(g *Tensor) {
		// an operand stored transposed (Linear's Wᵀ) gets its gradient
		// computed transposed, (Bᵀ·Gᵀ)ᵀ for a and (Gᵀ·A)ᵀ for b: the
		// view is then the transpose of a contiguous product, and the
		// gradient reaching the stored tensor is contiguous (no strided
		// copy when a leaf clones it)
		// (gradAs: each gradient in its operand's dtype)
		if as.requiresGrad {
			g := wideFor(g, as.shape)
			if aT {
				as.accumulate(gradAs(matmul(bd, g.Transpose(-1, -2), bd.layout.Shape, g.layout.Shape).Transpose(-1, -2), as.shape, as.dt))
			} else {
				as.accumulate(gradAs(matmul(g, bd.Transpose(-1, -2), g.layout.Shape, bd.layout.Shape), as.shape, as.dt))
			}
		}
		if bs.requiresGrad {
			g := wideFor(g, bs.shape)
			if bT {
				bs.accumulate(gradAs(matmul(g.Transpose(-1, -2), ad, g.layout.Shape, ad.layout.Shape).Transpose(-1, -2), bs.shape, bs.dt))
			} else {
				bs.accumulate(gradAs(matmul(ad.Transpose(-1, -2), g, ad.layout.Shape, g.layout.Shape), bs.shape, bs.dt))
			}
		}
	})
	return out
}

// wideFor returns the output gradient g for the product that gives the
// gradient of an operand of the given shape: widened to Float32 when g is
// 16-bit and the operand's batch dims were broadcast, so that the
// per-batch products are summed over them in float32 and rounded once
// (gradAs), as autograd in float32 would.
func wideFor(g *Tensor, shape []int) *Tensor {
	if is16(g.DType()) && !slices.Equal(shape[:len(shape)-2], g.layout.Shape[:g.Dim()-2]) {
		return g.ToDType(Float32)
	}
	return g
}

// gradAs returns x, a gradient for an operand of the given shape and
// dtype, in that dtype: where the operand is 16-bit (or x is) and its
// batch dims were broadcast, x is summed to its shape in float32 first
// (the 16-bit dtypes have no reductions of their own yet), then rounded
// once.
func gradAs(x *Tensor, shape []int, dt DType) *Tensor {
	if (is16(x.DType()) || is16(dt)) && !slices.Equal(x.layout.Shape, shape) {
		x = x.ToDType(Float32).sumTo(shape)
	}
	return x.ToDType(dt)
}
