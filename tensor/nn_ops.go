package tensor

import (
	"math"
	"slices"
)

// moveToLast returns t with dim moved to the end, as a contiguous tensor,
// and the function that moves a result of that shape back (a transposed
// view, or the result itself when dim already is the last).
func (t *Tensor) moveToLast(dim int) (*Tensor, func(*Tensor) *Tensor) {
	d := normDim("Softmax", dim, max(t.Dim(), 1))
	if t.Dim() == 0 || d == t.Dim()-1 {
		return t.dense(), func(x *Tensor) *Tensor { return x }
	}
	moved := t.Transpose(d, -1).dense()
	return moved, func(x *Tensor) *Tensor { return x.Transpose(d, -1) }
}

func (t *Tensor) softmax(dim int, log bool) *Tensor {
	name := "Softmax"
	if log {
		name = "LogSoftmax"
	}
	if is16(t.DType()) {
		return widened(t, func(x *Tensor) *Tensor { return x.softmax(dim, log) })
	}
	mustFloat(name, t)
	if t.Dim() > 0 {
		normDimOf(name, dim, t.layout.Shape)
	}
	checkAlloc(name, Float32, t.layout.Shape) // before moveToLast's copy
	x, back := t.moveToLast(dim)
	cols := 1
	if x.Dim() > 0 {
		cols = x.layout.Shape[x.Dim()-1]
	}
	rows := x.Numel() / max(cols, 1)
	y := emptyOut(name, t.backend, Float32, x.layout.Shape)
	if x.Numel() > 0 {
		t.backend.Softmax(y.storage, x.storage, rows, cols, log)
	}
	xs := x.sink() // the derivative reads y, not x
	record(name, y, []*Tensor{x}, func(g *Tensor) {
		g = g.dense()
		dx := emptyOut(name, xs.backend, Float32, xs.shape)
		xs.backend.SoftmaxGrad(dx.storage, g.storage, y.storage, rows, cols, log)
		xs.accumulate(dx)
	})
	// contiguous whatever dim is, as PyTorch's result for a contiguous
	// input, so that View works on it as it does there
	return back(y).Contiguous()
}

// Softmax returns exp(t) normalised to sum to 1 along dim. The result is
// contiguous.
func (t *Tensor) Softmax(dim int) *Tensor { return t.softmax(dim, false) }

// LogSoftmax returns log(Softmax(dim)), computed stably. The result is
// contiguous.
func (t *Tensor) LogSoftmax(dim int) *Tensor { return t.softmax(dim, true) }

// LayerNorm normalises over the last dimension (biased variance, like
// torch.nn.functional.layer_norm with normalized_shape = [C]) and applies
// the elementwise affine weight and bias, either of which may be nil. A
// BFloat16 or Float16 input (or weight, or bias) is normalised in float32
// and the result rounded once to the input's dtype.
func (t *Tensor) LayerNorm(weight, bias *Tensor, eps float32) *Tensor {
	if is16(t.DType()) || weight != nil && is16(weight.DType()) || bias != nil && is16(bias.DType()) {
		// float32 inside, the result rounded once to the input's dtype
		w, b := widenedOrNil(weight), widenedOrNil(bias)
		return widened(t, func(x *Tensor) *Tensor { return x.LayerNorm(w, b, eps) })
	}
	mustFloat("LayerNorm", t)
	if t.Dim() == 0 {
		panicf("LayerNorm", "expected at least 1 dimension, got a 0-d tensor")
	}
	cols := t.layout.Shape[t.Dim()-1]
	for _, p := range []*Tensor{weight, bias} {
		if p != nil {
			mustFloat("LayerNorm", p)
			sameDevice("LayerNorm", t, p)
			if !slices.Equal(p.layout.Shape, []int{cols}) {
				panicf("LayerNorm", "weight and bias must have shape [%d] for input %v, got %v", cols, t.layout.Shape, p.layout.Shape)
			}
		}
	}
	rows := t.Numel() / max(cols, 1)
	checkAlloc("LayerNorm", Float32, t.layout.Shape) // before dense's copy
	x := t.dense()
	w, b := contiguousOrNil(weight), contiguousOrNil(bias)
	y := emptyOut("LayerNorm", t.backend, Float32, t.layout.Shape)
	mean := empty("LayerNorm", t.backend, Float32, []int{rows})
	rstd := empty("LayerNorm", t.backend, Float32, []int{rows})
	t.backend.LayerNorm(y.storage, mean.storage, rstd.storage, x.storage, storageOrNil(w), storageOrNil(b), rows, cols, eps)
	record("LayerNorm", y, []*Tensor{x, weight, bias}, func(g *Tensor) {
		g = g.dense()
		var dx, dw, db *Tensor
		if x.requiresGrad {
			dx = emptyOut("LayerNorm", t.backend, Float32, x.layout.Shape)
		}
		if weight != nil && weight.requiresGrad {
			dw = empty("LayerNorm", t.backend, Float32, []int{cols})
		}
		if bias != nil && bias.requiresGrad {
			db = empty("LayerNorm", t.backend, Float32, []int{cols})
		}
		t.backend.LayerNormGrad(storageOrNil(dx), storageOrNil(dw), storageOrNil(db), g.storage, x.storage, mean.storage, rstd.storage, storageOrNil(w), rows, cols)
		x.accumulate(dx)
		if weight != nil {
			weight.accumulate(dw)
		}
		if bias != nil {
			bias.accumulate(db)
		}
	})
	return y
}

func contiguousOrNil(t *Tensor) *Tensor {
	if t == nil {
		return nil
	}
	return t.dense()
}

func storageOrNil(t *Tensor) Storage {
	if t == nil {
		return nil
	}
	return t.storage
}

// Dropout zeroes each element with probability p and scales the rest by
// 1/(1−p) when training is set; otherwise it returns t. The mask comes from
// the global generator (see DropoutWith). It panics if t is not a float
// tensor or p is outside [0, 1] (or NaN). A BFloat16 or Float16 t is
// scaled by 1/(1−p) rounded to its dtype, as in PyTorch.
func (t *Tensor) Dropout(p float32, training bool) *Tensor { return t.DropoutWith(p, training, nil) }

// DropoutWith is Dropout with the mask drawn from gen (the global generator
// if gen is nil). On a backend with its own mask kernel (DropoutMasker) it
// draws one number from gen, the kernel's seed; on the CPU it draws one
// number per element, all under one lock.
func (t *Tensor) DropoutWith(p float32, training bool, gen *Generator) *Tensor {
	mustFloating("Dropout", t)
	if !(p >= 0 && p <= 1) { // NaN too
		panicf("Dropout", "probability has to be between 0 and 1, but got %v", p)
	}
	if !training || p == 0 {
		return t
	}
	if p == 1 {
		return t.Mul(ZerosLike(t))
	}
	if dm, ok := t.backend.(DropoutMasker); ok {
		mask := empty("Dropout", t.backend, Float32, t.layout.Shape)
		dm.DropoutMask(mask.storage, t.Numel(), p, gen.Uint64())
		return t.Mul(mask)
	}
	checkAlloc("Dropout", Float32, t.layout.Shape)
	data := make([]float32, t.Numel())
	scale := 1 / (1 - p)
	g := gen.lock()
	for i := range data {
		if g.r.Float64() >= float64(p) {
			data[i] = scale
		}
	}
	g.mu.Unlock()
	mask := newTensor(t.backend, t.backend.FromFloat32s(data), contiguousLayout(t.layout.Shape))
	// a 16-bit t is scaled by 1/(1−p) rounded to its dtype, as PyTorch's
	// mask of t's dtype does
	return t.Mul(mask.ToDType(t.DType()))
}

// IndexSelect returns the entries of t at the Int64 indices idx (1-D) along
// dim.
func (t *Tensor) IndexSelect(dim int, idx *Tensor) *Tensor {
	d := normDimOf("IndexSelect", dim, t.layout.Shape)
	if idx.Dim() > 1 {
		panicf("IndexSelect", "index must be 1-D, got shape %v", idx.layout.Shape)
	}
	if idx.DType() != Int64 {
		panicf("IndexSelect", "index must be an int64 tensor, got %s%v", idx.DType(), idx.layout.Shape)
	}
	for _, v := range idx.Ints() {
		if v < 0 || v >= t.layout.Shape[d] {
			panicf("IndexSelect", "index %d is out of range for dimension %d with size %d (shape %v)", v, d, t.layout.Shape[d], t.layout.Shape)
		}
	}
	moved := t.Transpose(0, d)
	out := Embedding(moved, idx.Reshape(-1))
	return out.Transpose(0, d)
}

// Embedding looks up rows of weight ([num, dim...]) at the Int64 indices idx
// of any shape; the result has shape idx.shape + weight.shape[1:] and
// weight's dtype (a BFloat16 or Float16 table on the CPU gives its rows as
// they are, as torch.nn.functional.embedding does). Its gradient adds into
// the selected rows (in float32 for a 16-bit table, rounded once).
func Embedding(weight, idx *Tensor) *Tensor {
	mustFloating("Embedding", weight)
	sameDevice("Embedding", weight, idx)
	if idx.DType() != Int64 {
		panicf("Embedding", "indices must be an int64 tensor, got %s", idx.DType())
	}
	if weight.Dim() < 1 {
		panicf("Embedding", "weight must have at least 1 dimension, got shape %v", weight.layout.Shape)
	}
	num := weight.layout.Shape[0]
	rowShape := weight.layout.Shape[1:]
	rowLen := numel(rowShape)
	outShape := append(idx.Shape(), rowShape...)
	checkAlloc("Embedding", weight.DType(), outShape) // before the indices' copies
	ix := idx.dense()
	for _, v := range ix.Ints() {
		if v < 0 || v >= num {
			panicf("Embedding", "index %d is out of range for %d entries (weight shape %v)", v, num, weight.layout.Shape)
		}
	}
	w := weight.dense()
	n := ix.Numel()
	out := emptyOut("Embedding", weight.backend, weight.DType(), outShape)
	if n > 0 && rowLen > 0 {
		weight.backend.Gather(out.storage, w.storage, ix.storage, n, rowLen)
	}
	record("Embedding", out, []*Tensor{w}, func(g *Tensor) {
		// a 16-bit table's gradient is summed in float32 (rows picked
		// more than once add up) and rounded once
		g = g.ToDType(Float32).dense()
		dw := ZerosLike(w)
		if w.DType() != Float32 {
			dw = emptyOut("Embedding", w.backend, Float32, w.layout.Shape)
			w.backend.Fill(dw.storage, dw.layout, 0)
		}
		if n > 0 && rowLen > 0 {
			weight.backend.ScatterAdd(dw.storage, ix.storage, g.storage, n, rowLen)
		}
		w.accumulate(dw.ToDType(w.DType()))
	})
	return out
}

// NoIgnoreIndex is the ignore index that ignores nothing.
const NoIgnoreIndex = math.MinInt

// CrossEntropy returns the mean negative log-likelihood of the Int64
// targets under softmax(logits): logits are [N, C] (or [..., C] with
// targets [...]). It matches torch.nn.functional.cross_entropy.
func CrossEntropy(logits, targets *Tensor) *Tensor {
	return CrossEntropyIgnore(logits, targets, NoIgnoreIndex)
}

// CrossEntropyIgnore is CrossEntropy that skips the rows whose target is
// ignoreIndex (PyTorch's ignore_index, -100 by default there; nanoGPT uses
// -1); the mean is over the remaining rows (NaN if none remain, as in
// PyTorch).
func CrossEntropyIgnore(logits, targets *Tensor, ignoreIndex int) *Tensor {
	if is16(logits.DType()) {
		// float32 inside (log-softmax and the mean), the loss rounded once
		return widened(logits, func(x *Tensor) *Tensor { return CrossEntropyIgnore(x, targets, ignoreIndex) })
	}
	mustFloat("CrossEntropy", logits)
	sameDevice("CrossEntropy", logits, targets)
	if targets.DType() != Int64 {
		panicf("CrossEntropy", "targets must be an int64 tensor, got %s%v", targets.DType(), targets.layout.Shape)
	}
	if logits.Dim() < 1 || !slices.Equal(logits.layout.Shape[:logits.Dim()-1], targets.layout.Shape) {
		panicf("CrossEntropy", "logits of shape %v need targets of shape %v, got %v", logits.layout.Shape, logits.layout.Shape[:max(logits.Dim()-1, 0)], targets.layout.Shape)
	}
	cols := logits.layout.Shape[logits.Dim()-1]
	x := logits.Reshape(-1, cols).dense()
	tg := targets.Reshape(-1).dense()
	rows := x.layout.Shape[0]
	count := 0
	for _, v := range tg.Ints() {
		if v == ignoreIndex {
			continue
		}
		if v < 0 || v >= cols {
			panicf("CrossEntropy", "target %d is out of bounds for %d classes", v, cols)
		}
		count++
	}
	ign := int64(ignoreIndex)
	perRow := empty("CrossEntropy", logits.backend, Float32, []int{rows})
	if rows > 0 {
		logits.backend.CrossEntropy(perRow.storage, x.storage, tg.storage, rows, cols, ign)
	}
	loss := perRow.Sum().DivScalar(float32(count)) // perRow is fresh: not recorded
	record("CrossEntropy", loss, []*Tensor{x}, func(g *Tensor) {
		scale := g.Item() / float32(count)
		dx := emptyOut("CrossEntropy", logits.backend, Float32, x.layout.Shape)
		logits.backend.CrossEntropyGrad(dx.storage, x.storage, tg.storage, rows, cols, ign, scale)
		x.accumulate(dx)
	})
	return loss
}

// ScaledDotProductAttention computes softmax(q·kᵀ/√d + mask)·v over the
// last two dims of q [..., T, d], k [..., S, d] and v [..., S, dv]; with
// causal set, position i attends only to positions ≤ i (PyTorch's
// is_causal=True).
func ScaledDotProductAttention(q, k, v *Tensor, causal bool) *Tensor {
	if q.Dim() < 2 || k.Dim() < 2 || v.Dim() < 2 {
		panicf("ScaledDotProductAttention", "expected q, k, v with at least 2 dims, got %v, %v, %v", q.layout.Shape, k.layout.Shape, v.layout.Shape)
	}
	d := q.layout.Shape[q.Dim()-1]
	scale := float32(1 / math.Sqrt(float64(d)))
	att := q.MatMul(k.Transpose(-2, -1)).MulScalar(scale)
	if causal {
		// mask out j > i: the strict upper triangle
		att = att.MaskedFill(triMask(att, 1, false), float32(math.Inf(-1)))
	}
	return att.Softmax(-1).MatMul(v)
}
