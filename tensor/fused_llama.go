package tensor

import (
	"slices"

	"github.com/chewxy/math32"
)

// The layers of the Llama family as tensor operations: RMSNorm, rotary
// embeddings, SwiGLU and causal attention with grouped key/value heads.
// Each is one operation on backends that implement its optional interface
// (RMSNormer, Rotator, SwiGLUer, GroupedAttention: the CPU and CUDA
// backends implement all four) and the composition of primitive ops
// written beside it everywhere else; the fused kernels equal the
// composition within the backend suite's tolerances (tensor/backendtest),
// forward and backward.

// RMSNormer is an optional Backend method set, checked by Tensor.RMSNorm.
type RMSNormer interface {
	// RMSNorm writes y = w·(x·r) for each contiguous row of x [rows,
	// cols], where r = 1/√(mean(x²) + eps) (the squares rounded to float32,
	// summed in float64, the mean rounded to float32 as Mean does), and
	// saves each row's r in rstd. w may be nil (no scale).
	RMSNorm(dst, rstd, x, w Storage, rows, cols int, eps float32)
	// RMSNormGrad writes dx (if not nil) and adds into dw (if not nil)
	// given the gradient g of y and the saved rstd:
	//
	//	dx = r·(g·w) − x·r³·mean(g·w·x),  dw += Σ_rows g·x·r
	RMSNormGrad(dx, dw, g, x, rstd, w Storage, rows, cols int)
}

// Rotator is an optional Backend method set, checked by ApplyRotary.
type Rotator interface {
	// Rotary writes the rotary embedding of x into the contiguous dst of
	// xl's shape [A, H, T, D] (xl has 4 dims, the last of stride 1), given
	// the contiguous cos and sin [T, D]: with h = D/2, for i < h,
	//
	//	y[i]   = x[i]·cos[i]   − x[i+h]·sin[i]
	//	y[i+h] = x[i+h]·cos[i+h] + x[i]·sin[i+h]
	//
	// With transpose it writes the transposed map instead (the gradient
	// with respect to x of the above, applied to x):
	//
	//	y[i]   = x[i]·cos[i]     + x[i+h]·sin[i+h]
	//	y[i+h] = x[i+h]·cos[i+h] − x[i]·sin[i]
	Rotary(dst, x Storage, xl Layout, cos, sin Storage, transpose bool)
}

// SwiGLUer is an optional Backend method set, checked by SwiGLU.
type SwiGLUer interface {
	// SwiGLU writes y = silu(gate)·up = gate·σ(gate)·up over n contiguous
	// elements, σ(x) = 1/(1 + e⁻ˣ) as Sigmoid computes it, the products
	// in float32 in that order.
	SwiGLU(dst, gate, up Storage, n int)
	// SwiGLUGrad writes dgate = g·up·σ·(1 + gate·(1−σ)) and dup =
	// g·gate·σ (either may be nil) given the gradient g of y.
	SwiGLUGrad(dgate, dup, g, gate, up Storage, n int)
}

// GroupedAttention is an optional Backend method set, checked by
// CausalAttention: causal scaled dot-product attention whose query heads
// share key/value heads, without copies of the shared heads. q is the
// contiguous [B, H, T, D]; k and v are [B, Hkv, S, D] with Hkv dividing H
// and S = offset + T, read through kl and vl: each a 3-D layout
// [B·Hkv, S, D] with strides (head, row, 1), the rows at least D apart
// (a slice of a key/value cache [B, Hkv, capacity, D] is one). Query head
// h reads key/value head h/(H/Hkv) and query i (position offset+i) sees
// keys 0 … offset+i. The saved weights p are [B, H, T, S], zero where
// masked; the scale is 1/√D rounded to float32.
type GroupedAttention interface {
	// GroupedAttention writes y [B, H, T, D] and p.
	GroupedAttention(y, p, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int)
	// GroupedAttentionGrad writes dq [B, H, T, D] and the contiguous dk
	// and dv [B, Hkv, S, D] (every element; each may be nil if not
	// wanted) given the gradient dy of y and the saved p.
	GroupedAttentionGrad(dq, dk, dv, dy, p, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int)
}

// GroupedAttentionRecomputer is an optional extension of GroupedAttention,
// checked by CausalAttention: attention that keeps no weights [B, H, T, S]
// between the passes. The backward pass recomputes them from q and k with
// the forward pass's own code, so the gradients are bit for bit those of
// GroupedAttentionGrad given the saved weights; the price is the scores'
// product and the softmax once more per head.
type GroupedAttentionRecomputer interface {
	// GroupedAttentionNoWeights writes y as GroupedAttention does,
	// without p.
	GroupedAttentionNoWeights(y, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int)
	// GroupedAttentionGradRecompute is GroupedAttentionGrad with the
	// weights recomputed.
	GroupedAttentionGradRecompute(dq, dk, dv, dy, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int)
}

// RMSNorm normalises t over its last dimension by the reciprocal of its
// root mean square and scales by weight (nil for none), Hugging Face's
// LlamaRMSNorm in float32: weight·(t·rsqrt(mean(t², -1) + eps)). The
// weight must be [N] for t [..., N]. On backends that implement RMSNormer
// it is one kernel each way; elsewhere (and for other dtypes) it is that
// composition. It panics if the shapes or devices disagree.
func (t *Tensor) RMSNorm(weight *Tensor, eps float32) *Tensor {
	if t.Dim() == 0 {
		panicf("RMSNorm", "expected at least 1 dimension, got a 0-d tensor")
	}
	cols := t.layout.Shape[t.Dim()-1]
	if weight != nil {
		sameDevice("RMSNorm", t, weight)
		if !slices.Equal(weight.layout.Shape, []int{cols}) {
			panicf("RMSNorm", "weight must have shape [%d] for input %v, got %v", cols, t.layout.Shape, weight.layout.Shape)
		}
	}
	fb, ok := t.backend.(RMSNormer)
	if !ok || t.DType() != Float32 || weight != nil && weight.DType() != Float32 || t.Numel() == 0 {
		return rmsNormComposed(t, weight, eps)
	}
	rows := t.Numel() / cols
	checkAlloc("RMSNorm", Float32, t.layout.Shape)
	x := t.dense()
	w := contiguousOrNil(weight)
	y := emptyOut("RMSNorm", t.backend, Float32, t.layout.Shape)
	rstd := empty("RMSNorm", t.backend, Float32, []int{rows})
	fb.RMSNorm(y.storage, rstd.storage, x.storage, storageOrNil(w), rows, cols, eps)
	be := t.backend // the closure keeps x, w and rstd, not t
	record("RMSNorm", y, []*Tensor{x, weight}, func(g *Tensor) {
		g = g.dense()
		var dx, dw *Tensor
		if x.requiresGrad {
			dx = emptyOut("RMSNorm", be, Float32, x.layout.Shape)
		}
		if weight != nil && weight.requiresGrad {
			dw = empty("RMSNorm", be, Float32, []int{cols})
		}
		fb.RMSNormGrad(storageOrNil(dx), storageOrNil(dw), g.storage, x.storage, rstd.storage, storageOrNil(w), rows, cols)
		x.accumulate(dx)
		if weight != nil {
			weight.accumulate(dw)
		}
	})
	return y
}

// rmsNormComposed is RMSNorm from primitive ops: the specification the
// fused kernels are tested against.
func rmsNormComposed(t, weight *Tensor, eps float32) *Tensor {
	y := t.Mul(t.Square().MeanKeepDim(-1).AddScalar(eps).Rsqrt())
	if weight == nil {
		return y
	}
	return weight.Mul(y)
}

// ApplyRotary rotates x [..., T, D] by the angles whose cosines and sines
// are cos and sin [T, D] with Hugging Face's rotate_half convention:
// x·cos + rotate_half(x)·sin, where rotate_half(x) = cat(−x₂, x₁) for the
// halves x₁, x₂ of the last dimension. The result is contiguous. On
// backends that implement Rotator (and when cos and sin need no gradient)
// it is one kernel each way, reading x in place through its strides;
// elsewhere it is that composition. It panics if the shapes, dtypes or
// devices disagree.
func ApplyRotary(x, cos, sin *Tensor) *Tensor {
	if x.Dim() < 2 || cos.Dim() != 2 || !slices.Equal(cos.layout.Shape, sin.layout.Shape) || x.Size(-1) != cos.Size(1) || x.Size(-2) != cos.Size(0) || x.Size(-1)%2 != 0 {
		panicf("ApplyRotary", "expected x [..., T, D] with even D and cos, sin [T, D], got %v, %v and %v", x.layout.Shape, cos.layout.Shape, sin.layout.Shape)
	}
	sameDevice("ApplyRotary", x, cos, sin)
	fb, ok := x.backend.(Rotator)
	if !ok || x.DType() != Float32 || cos.DType() != Float32 || sin.DType() != Float32 || cos.requiresGrad || sin.requiresGrad || x.Numel() == 0 {
		return rotaryComposed(x, cos, sin)
	}
	t, d := x.Size(-2), x.Size(-1)
	xv := rotaryView(x)
	c, s := cos.dense(), sin.dense()
	y := emptyOut("ApplyRotary", x.backend, Float32, x.layout.Shape)
	fb.Rotary(y.storage, xv.storage, xv.layout, c.storage, s.storage, false)
	// the derivative is the transposed rotation of g: it keeps cos and
	// sin, not x
	xs := x.sink()
	record("ApplyRotary", y, []*Tensor{x}, func(g *Tensor) {
		g = g.dense()
		dx := emptyOut("ApplyRotary", xs.backend, Float32, xs.shape)
		gl := contiguousLayout([]int{1, g.Numel() / (t * d), t, d})
		fb.Rotary(dx.storage, g.storage, gl, c.storage, s.storage, true)
		xs.accumulate(dx)
	})
	return y
}

// rotaryView returns x as a 4-D view [A, H, T, D] whose last stride is 1,
// padding leading dims with 1 and merging what merges, or a contiguous
// copy viewed so when its strides do not allow that.
func rotaryView(x *Tensor) *Tensor {
	l := x.layout
	if l.Strides[len(l.Strides)-1] == 1 {
		lead, st := Collapse(l.Shape[:len(l.Shape)-2], l.Strides[:len(l.Strides)-2])
		if len(lead) <= 2 {
			sh := append(append(make([]int, 0, 4), lead...), l.Shape[len(l.Shape)-2:]...)
			sts := append(append(make([]int, 0, 4), st[0]...), l.Strides[len(l.Strides)-2:]...)
			for len(sh) < 4 {
				sh = append([]int{1}, sh...)
				sts = append([]int{0}, sts...)
			}
			return newTensor(x.backend, x.storage, Layout{Shape: sh, Strides: sts, Offset: l.Offset})
		}
	}
	c := x.dense()
	n, t, d := x.Numel(), x.Size(-2), x.Size(-1)
	return newTensor(x.backend, c.storage, contiguousLayout([]int{1, n / (t * d), t, d}))
}

// rotaryComposed is ApplyRotary from primitive ops: the specification the
// fused kernels are tested against.
func rotaryComposed(x, cos, sin *Tensor) *Tensor {
	last := x.Dim() - 1
	d := x.Size(-1)
	x1, x2 := x.Slice(last, 0, d/2), x.Slice(last, d/2, d)
	rot := Cat([]*Tensor{x2.Neg(), x1}, last)
	return x.Mul(cos).Add(rot.Mul(sin))
}

// SwiGLU returns silu(gate)·up = gate·σ(gate)·up elementwise, the gated
// activation of the Llama family's MLP. gate and up have one shape. On
// backends that implement SwiGLUer it is one kernel each way; elsewhere
// it is gate.Mul(gate.Sigmoid()).Mul(up). It panics if the shapes or
// devices disagree.
func SwiGLU(gate, up *Tensor) *Tensor {
	if !slices.Equal(gate.layout.Shape, up.layout.Shape) {
		panicf("SwiGLU", "expected gate and up of one shape, got %v and %v", gate.layout.Shape, up.layout.Shape)
	}
	sameDevice("SwiGLU", gate, up)
	fb, ok := gate.backend.(SwiGLUer)
	if !ok || gate.DType() != Float32 || up.DType() != Float32 || gate.Numel() == 0 {
		return swiGLUComposed(gate, up)
	}
	checkAlloc("SwiGLU", Float32, gate.layout.Shape)
	a, u := gate.dense(), up.dense()
	n := a.Numel()
	y := emptyOut("SwiGLU", gate.backend, Float32, gate.layout.Shape)
	fb.SwiGLU(y.storage, a.storage, u.storage, n)
	be := gate.backend // the closure keeps a and u (gate and up, dense)
	record("SwiGLU", y, []*Tensor{a, u}, func(g *Tensor) {
		g = g.dense()
		var da, du *Tensor
		if a.requiresGrad {
			da = emptyOut("SwiGLU", be, Float32, a.layout.Shape)
		}
		if u.requiresGrad {
			du = emptyOut("SwiGLU", be, Float32, u.layout.Shape)
		}
		fb.SwiGLUGrad(storageOrNil(da), storageOrNil(du), g.storage, a.storage, u.storage, n)
		a.accumulate(da)
		u.accumulate(du)
	})
	return y
}

// swiGLUComposed is SwiGLU from primitive ops: the specification the fused
// kernels are tested against.
func swiGLUComposed(gate, up *Tensor) *Tensor { return gate.Mul(gate.Sigmoid()).Mul(up) }

// CausalAttention is scaled dot-product attention with a causal mask whose
// queries start at position offset, over grouped key/value heads: q is
// [B, H, T, D], k and v are [B, Hkv, S, D] with S = offset+T and Hkv
// dividing H; query head h reads key/value head h/(H/Hkv) (Hugging Face's
// repeat_kv, without its copies) and query i attends to keys 0 … offset+i.
// It returns [B, H, T, D]:
//
//	softmax(q·kᵀ/√D + mask)·v
//
// On backends that implement GroupedAttention it is one operation each
// way on float32 tensors (q is made contiguous; k and v are read in place
// when they are slices of a key/value cache or contiguous); elsewhere
// (and for other dtypes) it is the
// composition of MatMul, MulScalar, MaskedFill, Softmax and MatMul on q
// viewed as [B, Hkv, (H/Hkv)·T, D]. Inside an autocast region, for T > 1,
// the fused kernels round their operands where that composition's
// products would (RoundedGroupedAttention), on rounded copies of q, k and
// v. It panics if the shapes, dtypes or devices disagree.
func CausalAttention(q, k, v *Tensor, offset int) *Tensor {
	if q.Dim() != 4 || k.Dim() != 4 || v.Dim() != 4 || offset < 0 {
		panicf("CausalAttention", "expected q [B, H, T, D], k and v [B, Hkv, offset+T, D] and offset ≥ 0, got %v, %v, %v and %d", q.layout.Shape, k.layout.Shape, v.layout.Shape, offset)
	}
	b, h, t, d := q.Size(0), q.Size(1), q.Size(2), q.Size(3)
	hkv, s := k.Size(1), k.Size(2)
	if k.Size(0) != b || v.Size(0) != b || k.Size(3) != d || v.Size(3) != d || v.Size(1) != hkv || v.Size(2) != s || s != offset+t || hkv <= 0 || h%hkv != 0 {
		panicf("CausalAttention", "expected q [B, H, T, D], k and v [B, Hkv, offset+T, D] with Hkv dividing H, got %v, %v, %v and offset %d", q.layout.Shape, k.layout.Shape, v.layout.Shape, offset)
	}
	sameDevice("CausalAttention", q, k, v)
	if r := autocastFor(q, k, v); r != nil && t > 1 && q.Numel() > 0 && q.DType() == Float32 && k.DType() == Float32 && v.DType() == Float32 {
		if rb, ok := q.backend.(RoundedGroupedAttention); ok {
			return causalAttentionAutocast(q, k, v, rb, r.dt, offset)
		}
	}
	fb, ok := q.backend.(GroupedAttention)
	if !ok || q.DType() != Float32 || k.DType() != Float32 || v.DType() != Float32 || q.Numel() == 0 || autocastAttention(q, k, v) {
		return causalAttentionComposed(q, k, v, offset)
	}
	qd, kd, vd := q.dense(), kvView(k), kvView(v)
	kl, vl := kvLayout(kd), kvLayout(vd)
	y := emptyOut("CausalAttention", q.backend, Float32, []int{b, h, t, d})
	var p *Tensor // the weights, kept unless the backward pass recomputes them
	rb, recompute := q.backend.(GroupedAttentionRecomputer)
	if recompute {
		rb.GroupedAttentionNoWeights(y.storage, qd.storage, kd.storage, kl, vd.storage, vl, b, h, hkv, t, s, d, offset)
	} else {
		p = emptyOut("CausalAttention", q.backend, Float32, []int{b, h, t, s})
		fb.GroupedAttention(y.storage, p.storage, qd.storage, kd.storage, kl, vd.storage, vl, b, h, hkv, t, s, d, offset)
	}
	be := q.backend // the closure keeps qd, kd, vd and p, not q, k, v
	record("CausalAttention", y, []*Tensor{qd, kd, vd}, func(g *Tensor) {
		g = g.dense()
		var dq, dk, dv *Tensor
		if qd.requiresGrad {
			dq = emptyOut("CausalAttention", be, Float32, qd.layout.Shape)
		}
		if kd.requiresGrad {
			dk = emptyOut("CausalAttention", be, Float32, kd.layout.Shape)
		}
		if vd.requiresGrad {
			dv = emptyOut("CausalAttention", be, Float32, vd.layout.Shape)
		}
		if recompute {
			rb.GroupedAttentionGradRecompute(storageOrNil(dq), storageOrNil(dk), storageOrNil(dv), g.storage, qd.storage, kd.storage, kl, vd.storage, vl, b, h, hkv, t, s, d, offset)
		} else {
			fb.GroupedAttentionGrad(storageOrNil(dq), storageOrNil(dk), storageOrNil(dv), g.storage, p.storage, qd.storage, kd.storage, kl, vd.storage, vl, b, h, hkv, t, s, d, offset)
		}
		qd.accumulate(dq)
		kd.accumulate(dk)
		vd.accumulate(dv)
	})
	return y
}

// kvView returns x [B, Hkv, S, D] itself when kvLayout can describe it (a
// slice of a key/value cache, a contiguous tensor), else a contiguous copy.
func kvView(x *Tensor) *Tensor {
	sh, st := x.layout.Shape, x.layout.Strides
	b, hkv, s, d := sh[0], sh[1], sh[2], sh[3]
	rowsOK := st[3] == 1 || d == 1
	apart := s == 1 || st[2] >= d
	merges := b == 1 || hkv == 1 || st[0] == hkv*st[1]
	if rowsOK && apart && merges && st[1] >= 0 && st[0] >= 0 {
		return x
	}
	return x.dense()
}

// kvLayout is the [B·Hkv, S, D] layout of x (kvView's result), with the
// strides of dims of size 1 made what a contiguous tensor has.
func kvLayout(x *Tensor) Layout {
	sh, st := x.layout.Shape, x.layout.Strides
	b, hkv, s, d := sh[0], sh[1], sh[2], sh[3]
	row := st[2]
	if s == 1 {
		row = d
	}
	head := st[1] // = st[0]/hkv unless b == 1
	if hkv == 1 {
		head = st[0]
	}
	if b*hkv == 1 {
		head = s * row
	}
	return Layout{Shape: []int{b * hkv, s, d}, Strides: []int{head, row, 1}, Offset: x.layout.Offset}
}

// causalAttentionComposed is CausalAttention from primitive ops: the
// specification the fused kernels are tested against. The query heads of
// one group are consecutive in q, so q viewed as [B, Hkv, g·T, D] meets
// each key/value head once.
func causalAttentionComposed(q, k, v *Tensor, offset int) *Tensor {
	b, h, t, d := q.Size(0), q.Size(1), q.Size(2), q.Size(3)
	hkv, s := k.Size(1), k.Size(2)
	g := h / hkv
	qg := q.Reshape(b, hkv, g*t, d)
	att := qg.MatMul(k.Transpose(-2, -1)).MulScalar(attentionScale(d))
	if t > 1 {
		// query i sees keys j ≤ offset+i: mask j ≥ offset+i+1, the same
		// for each head of a group
		mask := Ones(t, s).Triu(offset + 1)
		if g > 1 {
			mask = mask.Unsqueeze(0).Expand(g, t, s).Reshape(g*t, s)
		}
		att = att.MaskedFill(mask.To(q.Device()), math32.Inf(-1))
	}
	return att.Softmax(-1).MatMul(v).Reshape(b, h, t, d)
}
