package tensor

import "slices"

// linearCERows returns the rows of a chunk of LinearCrossEntropy over a
// vocabulary of v: at most 64 MiB of logits, a multiple of 16 rows, at
// least 16 (linearCERowsTest when set).
func linearCERows(v int) int {
	if linearCERowsTest > 0 {
		return linearCERowsTest
	}
	return max(16, (16<<20)/max(v, 1)/16*16)
}

// linearCERowsTest, when positive, is the chunk of LinearCrossEntropy
// whatever the vocabulary; tests set it.
var linearCERowsTest int

// LinearCrossEntropy returns the mean cross-entropy of the logits of a
// linear head, x·weightᵀ, against targets, skipping the rows whose target
// is ignoreIndex:
//
//	CrossEntropyIgnore(x.MatMul(weight.T()), targets, ignoreIndex)
//
// without the logits [N, V] ever existing whole. The rows go through the
// head in chunks of at most 64 MiB of logits, each chunk's logits dropped
// once its rows' losses are written; the backward pass computes each
// chunk's logits again for its gradient. A language model's training step
// therefore keeps no [N, V] tensor for backward and needs one chunk's
// logits and their gradient at a time instead of two [N, V] tensors (the
// logits and their gradient), for the price of the head's product once
// more in the backward pass. x is float32 [N, C], weight float32 [V, C] (a
// Linear's weight: out × in), targets int64 [N]. The loss and the gradient
// of x equal the composition's to float32 rounding; the weight's gradient
// sums the chunks' products one after another instead of in one product.
// Inside an autocast region the head's products run as MatMul's do there
// (operands rounded to the region's dtype, float32 sums and logits; the
// loss is float32). It panics if the shapes, dtypes or devices disagree or a target other
// than ignoreIndex is outside [0, V).
func LinearCrossEntropy(x, weight, targets *Tensor, ignoreIndex int) *Tensor {
	const op = "LinearCrossEntropy"
	mustFloat(op, x)
	mustFloat(op, weight)
	sameDevice(op, x, weight, targets)
	if x.Dim() != 2 || weight.Dim() != 2 || x.layout.Shape[1] != weight.layout.Shape[1] || targets.DType() != Int64 || !slices.Equal(targets.layout.Shape, x.layout.Shape[:1]) {
		panicf(op, "expected x [N, C], weight [V, C] and int64 targets [N], got %v, %v and %s%v", x.layout.Shape, weight.layout.Shape, targets.DType(), targets.layout.Shape)
	}
	n, vocab := x.layout.Shape[0], weight.layout.Shape[0]
	tg := targets.dense()
	count := 0
	for _, v := range tg.Ints() {
		if v == ignoreIndex {
			continue
		}
		if v < 0 || v >= vocab {
			panicf(op, "target %d is out of bounds for %d classes", v, vocab)
		}
		count++
	}
	ign := int64(ignoreIndex)
	rows := linearCERows(vocab)
	be := x.backend
	// the products run the same way in both passes, so that the backward
	// pass recomputes exactly the logits of the forward pass: on x and the
	// weight as they are, or, inside an autocast region, on their copies
	// rounded to the region's dtype here (the weight's the region's own,
	// as for any product of it there), with float32 sums and logits; the
	// logits' gradient is then rounded likewise before its products, as an
	// autocast MatMul rounds its output's gradient
	xd, wd := acOperand{t: x.Detach()}, acOperand{t: weight.Detach()}
	gradOperand := func(t *Tensor) acOperand { return acOperand{t: t} }
	mm := func(a, b acOperand) *Tensor { return matmulTo(a.t, b.t, a.shape(), b.shape(), Float32, be.MatMul) }
	if r := autocastFor(x, weight); r != nil {
		// (autocast_product.go: float32 operands rounded as the products
		// read them)
		xd, wd = r.productOperand(x), r.productOperand(weight)
		gradOperand = r.gradOperand
		mm = func(a, b acOperand) *Tensor { return r.product(a, b, a.shape(), b.shape()) }
	}
	wdT := wd.transpose()
	// chunk runs f on the logits of each chunk of rows [r0, r0+rc) with
	// the chunk's targets, dropping them afterwards
	chunk := func(f func(r0, rc int, logits, tgc *Tensor)) {
		for r0 := 0; r0 < n; r0 += rows {
			rc := min(rows, n-r0)
			logits := mm(acOperand{xd.t.Narrow(0, r0, rc), xd.round}, wdT)
			tgc := tg.Narrow(0, r0, rc).dense()
			f(r0, rc, logits, tgc)
			logits.Release()
		}
	}
	perRow := empty(op, be, Float32, []int{n})
	chunk(func(r0, rc int, logits, tgc *Tensor) {
		part := empty(op, be, Float32, []int{rc})
		be.CrossEntropy(part.storage, logits.storage, tgc.storage, rc, vocab, ign)
		perRow.narrowView(0, r0, rc).CopyFrom(part)
	})
	loss := perRow.Sum().DivScalar(float32(count)) // perRow is fresh: not recorded
	// the closure keeps x and the weight (xd, wd), the targets and the
	// sinks of their gradients; no logits
	xs, ws := x.sink(), weight.sink()
	record(op, loss, []*Tensor{x, weight}, func(g *Tensor) {
		scale := g.Item() / float32(count)
		var dx, dw *Tensor
		if xs.requiresGrad {
			dx = emptyOut(op, be, Float32, xs.shape)
		}
		if ws.requiresGrad {
			dw = empty(op, be, Float32, ws.shape)
		}
		chunk(func(r0, rc int, logits, tgc *Tensor) {
			dl := emptyOut(op, be, Float32, []int{rc, vocab})
			be.CrossEntropyGrad(dl.storage, logits.storage, tgc.storage, rc, vocab, ign, scale)
			d := gradOperand(dl)
			if d.t.storage != dl.storage {
				dl.Release()
				dl = d.t
			}
			if dx != nil {
				part := mm(d, wd)
				dx.narrowView(0, r0, rc).CopyFrom(part)
				part.Release()
			}
			if dw != nil {
				part := mm(d.transpose(), acOperand{xd.t.Narrow(0, r0, rc), xd.round})
				be.Binary(OpAdd, dw.storage, dw.storage, dw.layout, part.storage, part.layout)
				part.Release()
			}
			dl.Release()
		})
		xs.accumulate(dx)
		ws.accumulate(dw)
	})
	return loss
}
