package tensor

import "slices"

// reduceDims normalises dims (all dims when empty) and returns them sorted
// and unique.
func (t *Tensor) reduceDims(op string, dims []int) []int {
	if len(dims) == 0 {
		all := make([]int, t.Dim())
		for i := range all {
			all[i] = i
		}
		return all
	}
	out := make([]int, 0, len(dims))
	for _, d := range dims {
		d = normDimOf(op, d, t.layout.Shape)
		if slices.Contains(out, d) {
			panicf(op, "dim %d appears multiple times in the list of dims", d)
		}
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// reduceNames are the user-facing names of the reductions, for messages.
var reduceNames = map[ReduceOp]string{ReduceSum: "Sum", ReduceMax: "Max", ReduceMin: "Min", ReduceArgMax: "ArgMax", ReduceArgMin: "ArgMin", ReduceLogSumExp: "LogSumExp"}

// reduceRaw applies a primitive reduction over dims (keeping them as size
// 1), without recording.
func (t *Tensor) reduceRaw(op ReduceOp, dims []int) *Tensor {
	// all elements of a contiguous tensor: one reduction over them as a
	// single line (one pass over memory, split across workers for a sum)
	// instead of one pass per dim, the first of them strided
	if (op == ReduceSum || op == ReduceMax || op == ReduceMin) && t.Dim() > 1 && len(dims) == t.Dim() && t.IsContiguous() && t.Numel() > 0 {
		flat := Layout{Shape: []int{t.Numel()}, Strides: []int{1}, Offset: t.layout.Offset}
		shape := make([]int, t.Dim())
		for d := range shape {
			shape[d] = 1
		}
		out := empty(reduceNames[op], t.backend, Float32, shape)
		t.backend.Reduce(op, out.storage, t.storage, flat, 0)
		return out
	}
	cur := t
	for _, d := range dims {
		shape := cur.Shape()
		shape[d] = 1
		dt := Float32
		if op == ReduceArgMax || op == ReduceArgMin {
			dt = Int64
		}
		out := empty(reduceNames[op], t.backend, dt, shape)
		if cur.layout.Shape[d] == 0 && op != ReduceSum && op != ReduceLogSumExp {
			panicf(reduceNames[op], "cannot reduce over a zero-size dimension %d of shape %v", d, t.layout.Shape)
		}
		t.backend.Reduce(op, out.storage, cur.storage, cur.layout, d)
		cur = out
	}
	if len(dims) == 0 {
		cur = t.Detach().Clone()
	}
	return cur
}

// finishReduce returns raw, a fresh contiguous reduction result whose
// reduced dims ds are kept with size 1, in the requested shape, recorded as
// one node named op; backward receives the output's gradient with the
// reduced dims kept.
func (t *Tensor) finishReduce(op string, raw *Tensor, ds []int, keep bool, backward func(g *Tensor)) *Tensor {
	out := raw
	if !keep {
		shape := []int{}
		for i, d := range raw.layout.Shape {
			if !slices.Contains(ds, i) {
				shape = append(shape, d)
			}
		}
		out = newTensor(raw.backend, raw.storage, contiguousLayout(shape))
	}
	kept := raw.layout.Shape
	record(op, out, []*Tensor{t}, func(g *Tensor) { backward(g.Reshape(kept...)) })
	return out
}

func (t *Tensor) sum(dims []int, keep bool) *Tensor {
	if is16(t.DType()) {
		return widened(t, func(x *Tensor) *Tensor { return x.sum(dims, keep) })
	}
	mustFloat("Sum", t)
	ds := t.reduceDims("Sum", dims)
	return t.finishReduce("Sum", t.reduceRaw(ReduceSum, ds), ds, keep, func(g *Tensor) {
		t.accumulate(g.broadcastTo(t.layout.Shape))
	})
}

// Sum returns the sum over the given dims (which are removed), or over all
// elements as a 0-d tensor when none are given.
func (t *Tensor) Sum(dims ...int) *Tensor { return t.sum(dims, false) }

// SumKeepDim is Sum keeping the reduced dims with size 1.
func (t *Tensor) SumKeepDim(dims ...int) *Tensor { return t.sum(dims, true) }

func (t *Tensor) mean(dims []int, keep bool) *Tensor {
	if is16(t.DType()) {
		return widened(t, func(x *Tensor) *Tensor { return x.mean(dims, keep) })
	}
	mustFloat("Mean", t)
	ds := t.reduceDims("Mean", dims)
	n := 1
	for _, d := range ds {
		n *= t.layout.Shape[d]
	}
	raw := t.reduceRaw(ReduceSum, ds).DivScalar(float32(n)) // fresh: not recorded
	return t.finishReduce("Mean", raw, ds, keep, func(g *Tensor) {
		t.accumulate(g.broadcastTo(t.layout.Shape).DivScalar(float32(n)))
	})
}

// Mean returns the mean over the given dims, or over all elements.
func (t *Tensor) Mean(dims ...int) *Tensor { return t.mean(dims, false) }

// MeanKeepDim is Mean keeping the reduced dims with size 1.
func (t *Tensor) MeanKeepDim(dims ...int) *Tensor { return t.mean(dims, true) }

// extreme implements Max and Min: the gradient is shared equally among the
// elements equal to the extreme (PyTorch's amax/amin rule).
func (t *Tensor) extreme(op ReduceOp, name string, dims []int, keep bool) *Tensor {
	if is16(t.DType()) {
		return widened(t, func(x *Tensor) *Tensor { return x.extreme(op, name, dims, keep) })
	}
	mustFloat(name, t)
	ds := t.reduceDims(name, dims)
	raw := t.reduceRaw(op, ds)
	return t.finishReduce(name, raw, ds, keep, func(g *Tensor) {
		mask := t.Eq(raw)
		count := mask.SumKeepDim(ds...)
		t.accumulate(mask.Mul(g.Div(count)))
	})
}

// Max returns the maximum over the given dims, or over all elements.
func (t *Tensor) Max(dims ...int) *Tensor { return t.extreme(ReduceMax, "Max", dims, false) }

// MaxKeepDim is Max keeping the reduced dims with size 1.
func (t *Tensor) MaxKeepDim(dims ...int) *Tensor { return t.extreme(ReduceMax, "Max", dims, true) }

// Min returns the minimum over the given dims, or over all elements.
func (t *Tensor) Min(dims ...int) *Tensor { return t.extreme(ReduceMin, "Min", dims, false) }

// MinKeepDim is Min keeping the reduced dims with size 1.
func (t *Tensor) MinKeepDim(dims ...int) *Tensor { return t.extreme(ReduceMin, "Min", dims, true) }

func (t *Tensor) argExtreme(op ReduceOp, name string, dim []int, keep bool) *Tensor {
	if is16(t.DType()) {
		return widened(t, func(x *Tensor) *Tensor { return x.argExtreme(op, name, dim, keep) })
	}
	mustFloat(name, t)
	if len(dim) > 1 {
		panicf(name, "expected at most one dim, got %v", dim)
	}
	if len(dim) == 0 {
		return t.Reshape(-1).argExtreme(op, name, []int{0}, false).Reshape()
	}
	d := normDimOf(name, dim[0], t.layout.Shape)
	raw := t.reduceRaw(op, []int{d})
	if keep {
		return raw
	}
	return raw.Reshape(slices.Delete(raw.Shape(), d, d+1)...)
}

// ArgMax returns the Int64 index of the first maximum along dim, or of the
// flattened tensor when no dim is given.
func (t *Tensor) ArgMax(dim ...int) *Tensor { return t.argExtreme(ReduceArgMax, "ArgMax", dim, false) }

// ArgMaxKeepDim is ArgMax keeping dim with size 1.
func (t *Tensor) ArgMaxKeepDim(dim int) *Tensor {
	return t.argExtreme(ReduceArgMax, "ArgMax", []int{dim}, true)
}

// ArgMin returns the Int64 index of the first minimum along dim.
func (t *Tensor) ArgMin(dim ...int) *Tensor { return t.argExtreme(ReduceArgMin, "ArgMin", dim, false) }

func (t *Tensor) variance(dims []int, keep bool) *Tensor {
	if is16(t.DType()) {
		return widened(t, func(x *Tensor) *Tensor { return x.variance(dims, keep) })
	}
	mustFloat("Var", t)
	ds := t.reduceDims("Var", dims)
	n := 1
	for _, d := range ds {
		n *= t.layout.Shape[d]
	}
	centered := t.Sub(t.MeanKeepDim(ds...))
	return centered.Mul(centered).sum(ds, keep).DivScalar(float32(n - 1))
}

// Var returns the unbiased variance (divisor N−1, torch.var's default) over
// the given dims, or over all elements.
func (t *Tensor) Var(dims ...int) *Tensor { return t.variance(dims, false) }

// VarKeepDim is Var keeping the reduced dims with size 1.
func (t *Tensor) VarKeepDim(dims ...int) *Tensor { return t.variance(dims, true) }

func (t *Tensor) logSumExp(dims []int, keep bool) *Tensor {
	if is16(t.DType()) {
		return widened(t, func(x *Tensor) *Tensor { return x.logSumExp(dims, keep) })
	}
	mustFloat("LogSumExp", t)
	ds := t.reduceDims("LogSumExp", dims)
	var raw *Tensor
	if len(ds) == 1 {
		raw = t.reduceRaw(ReduceLogSumExp, ds)
	} else {
		// several dims: move them last, flatten, reduce once
		raw = t.reduceMany(ds)
	}
	return t.finishReduce("LogSumExp", raw, ds, keep, func(g *Tensor) {
		t.accumulate(g.Mul(t.Sub(raw).Exp()))
	})
}

// reduceMany computes logsumexp over several dims (keepdim).
func (t *Tensor) reduceMany(ds []int) *Tensor {
	var perm, keptShape []int
	for i := range t.Dim() {
		if !slices.Contains(ds, i) {
			perm = append(perm, i)
		}
	}
	perm = append(perm, ds...)
	keptShape = t.Shape()
	for _, d := range ds {
		keptShape[d] = 1
	}
	p := t.Detach().Permute(perm...).Contiguous()
	flat := p.Reshape(append(p.Shape()[:t.Dim()-len(ds)], -1)...)
	return flat.reduceRaw(ReduceLogSumExp, []int{flat.Dim() - 1}).Reshape(keptShape...)
}

// LogSumExp returns log Σ exp over the given dims (stable), or over all
// elements.
func (t *Tensor) LogSumExp(dims ...int) *Tensor { return t.logSumExp(dims, false) }

// LogSumExpKeepDim is LogSumExp keeping the reduced dims with size 1.
func (t *Tensor) LogSumExpKeepDim(dims ...int) *Tensor { return t.logSumExp(dims, true) }
