package tensor

import "math"

// AttentionQKV is multi-head scaled dot-product attention on a packed
// projection, the form GPT layers use: qkv is [B, T, 3·C] holding the
// queries, keys and values side by side along the last dim (as produced by
// one Linear to 3·C), each split into nHead heads of C/nHead features. It
// returns y [B, T, C] with the heads merged back, equal to
//
//	q, k, v := qkv.Split(C, 2)  // each viewed as [B, nHead, T, C/nHead]
//	y := ScaledDotProductAttention(q, k, v, causal)
//	y.Transpose(1, 2).Reshape(B, T, C)
//
// On backends with a fused kernel (the CPU) it runs as one operation that
// reads the heads in place, computes each row's softmax only over the
// positions it may see, and writes the gradient of qkv in one pass without
// the intermediate tensors of the composition; elsewhere it is that
// composition. Inside an autocast region the fused kernels round their
// operands where the composition's products would (RoundedAttention), so
// the numbers are the composition's there too. AttentionQKV panics if qkv is not a float32 [B, T, 3·C]
// tensor with C divisible by nHead.
func AttentionQKV(qkv *Tensor, nHead int, causal bool) *Tensor {
	mustFloat("AttentionQKV", qkv)
	if qkv.Dim() != 3 || nHead <= 0 || qkv.layout.Shape[2]%(3*nHead) != 0 {
		panicf("AttentionQKV", "expected qkv [B, T, 3·C] with C divisible by nHead=%d, got shape %v", nHead, qkv.layout.Shape)
	}
	b, t, c := qkv.layout.Shape[0], qkv.layout.Shape[1], qkv.layout.Shape[2]/3
	fb, ok := qkv.backend.(FusedAttention)
	if r := autocastFor(qkv); r != nil && qkv.Numel() > 0 {
		if rb, ok := qkv.backend.(RoundedAttention); ok {
			return attentionAutocast(qkv.dense(), rb, r.dt, nHead, causal)
		}
	}
	if !ok || qkv.Numel() == 0 || autocastAttention(qkv) {
		return attentionComposed(qkv, nHead, causal)
	}
	x := qkv.dense()
	hs := c / nHead
	y := emptyOut("AttentionQKV", qkv.backend, Float32, []int{b, t, c})
	var probs *Tensor // kept unless the backward pass recomputes them
	rb, recompute := qkv.backend.(AttentionRecomputer)
	if recompute {
		rb.AttentionNoWeights(y.storage, x.storage, b, t, nHead, hs, causal)
	} else {
		probs = emptyOut("AttentionQKV", qkv.backend, Float32, []int{b, nHead, t, t})
		fb.Attention(y.storage, probs.storage, x.storage, b, t, nHead, hs, causal)
	}
	be := qkv.backend // the closure keeps x (and probs), not qkv
	record("AttentionQKV", y, []*Tensor{x}, func(g *Tensor) {
		g = g.dense()
		dx := emptyOut("AttentionQKV", be, Float32, x.layout.Shape)
		if recompute {
			rb.AttentionGradRecompute(dx.storage, g.storage, x.storage, b, t, nHead, hs, causal)
		} else {
			fb.AttentionGrad(dx.storage, g.storage, probs.storage, x.storage, b, t, nHead, hs, causal)
		}
		x.accumulate(dx)
	})
	return y
}

// AttentionRecomputer is an optional extension of FusedAttention, checked
// by AttentionQKV: attention that keeps no probabilities [B, nh, T, T]
// between the passes. The backward pass recomputes them from qkv with the
// forward pass's own code, so the gradient is bit for bit AttentionGrad's
// given the saved probabilities; the price is the scores' product and the
// softmax once more per head. The CPU backend implements it.
type AttentionRecomputer interface {
	// AttentionNoWeights writes y as Attention does, without p.
	AttentionNoWeights(y, qkv Storage, b, t, nh, hs int, causal bool)
	// AttentionGradRecompute is AttentionGrad with p recomputed.
	AttentionGradRecompute(dqkv, dy, qkv Storage, b, t, nh, hs int, causal bool)
}

// attentionComposed is AttentionQKV from the primitive ops: the
// specification the fused kernels are tested against.
func attentionComposed(qkv *Tensor, nHead int, causal bool) *Tensor {
	b, t, c := qkv.layout.Shape[0], qkv.layout.Shape[1], qkv.layout.Shape[2]/3
	parts := qkv.Split(c, 2)
	heads := func(z *Tensor) *Tensor { return z.Reshape(b, t, nHead, c/nHead).Transpose(1, 2) }
	y := ScaledDotProductAttention(heads(parts[0]), heads(parts[1]), heads(parts[2]), causal)
	return y.Transpose(1, 2).Reshape(b, t, c)
}

// FusedAttention is an optional Backend method set, checked by
// AttentionQKV: a backend that implements it runs attention as two fused
// kernels; AttentionQKV composes primitives on the others. The CPU
// backend implements it.
type FusedAttention interface {
	// Attention computes y [B, T, nh·hs] and the attention probabilities
	// p [B, nh, T, T] (zero above the diagonal when causal) from the
	// contiguous packed qkv [B, T, 3·nh·hs].
	Attention(y, p, qkv Storage, b, t, nh, hs int, causal bool)
	// AttentionGrad writes the gradient of qkv into dqkv (every element)
	// given the gradient dy of y and the saved p.
	AttentionGrad(dqkv, dy, p, qkv Storage, b, t, nh, hs int, causal bool)
}

// attentionScale is 1/√hs rounded like ScaledDotProductAttention's.
func attentionScale(hs int) float32 { return float32(1 / math.Sqrt(float64(hs))) }

// RoundedAttention is an optional extension of FusedAttention, checked by
// AttentionQKV inside an autocast region: the fused kernels on operands
// rounded to the region's dtype dt (BFloat16 or Float16), giving the
// composition's numbers whose products are autocast MatMuls
// (attentionAutocast). The CPU backend implements it; on the others the
// composition runs.
type RoundedAttention interface {
	// AttentionRounded writes qkvr, qkv's elements rounded to dt (as
	// float32 values), and y from them as AttentionNoWeights does, the
	// probabilities rounded to dt before their product with the values.
	AttentionRounded(y, qkvr, qkv Storage, b, t, nh, hs int, causal bool, dt DType)
	// AttentionRoundedGrad writes the gradient of qkv into dqkv (every
	// element) given the gradient dy of y and the rounded qkvr: dy, the
	// recomputed probabilities and the gradient of the scores are rounded
	// to dt before the products that read them.
	AttentionRoundedGrad(dqkv, dy, qkvr Storage, b, t, nh, hs int, causal bool, dt DType)
}

// attentionAutocast is AttentionQKV of the contiguous x inside an autocast
// region of dt, on a backend with the rounded kernels: the numbers of
// attentionComposed there, where the two forward products and the four
// backward ones are autocast MatMuls (operands and output gradient rounded
// to dt, float32 sums and results) and the scale, the mask and the softmax
// run in float32 between them, as torch.autocast runs nanoGPT's attention
// written out (softmax is on its float32 list). It saves the rounded qkv
// only.
func attentionAutocast(x *Tensor, rb RoundedAttention, dt DType, nHead int, causal bool) *Tensor {
	b, t, c := x.layout.Shape[0], x.layout.Shape[1], x.layout.Shape[2]/3
	hs := c / nHead
	y := emptyOut("AttentionQKV", x.backend, Float32, []int{b, t, c})
	xr := emptyOut("AttentionQKV", x.backend, Float32, x.layout.Shape)
	rb.AttentionRounded(y.storage, xr.storage, x.storage, b, t, nHead, hs, causal, dt)
	be, xs := x.backend, x.sink() // the closure keeps xr, not x
	record("AttentionQKV", y, []*Tensor{x}, func(g *Tensor) {
		g = g.dense()
		dx := emptyOut("AttentionQKV", be, Float32, xs.shape)
		rb.AttentionRoundedGrad(dx.storage, g.storage, xr.storage, b, t, nHead, hs, causal, dt)
		xs.accumulate(dx)
	})
	return y
}

// RoundedGroupedAttention is an optional extension of GroupedAttention,
// checked by CausalAttention inside an autocast region for T > 1: the
// grouped kernels on q, k and v that the caller rounded to dt (float32
// values), keeping no weights, as RoundedAttention does for AttentionQKV.
// The CPU backend implements it; on the others the composition runs.
type RoundedGroupedAttention interface {
	// GroupedAttentionRounded writes y as GroupedAttentionNoWeights
	// does, the weights rounded to dt before their product with v.
	GroupedAttentionRounded(y, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int, dt DType)
	// GroupedAttentionRoundedGrad writes dq, dk and dv as
	// GroupedAttentionGradRecompute does, with dy, the recomputed
	// weights and the scores' gradient rounded to dt before the products
	// that read them.
	GroupedAttentionRoundedGrad(dq, dk, dv, dy, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int, dt DType)
}

// roundedCopy returns a contiguous float32 tensor of x's values rounded to
// dt, not recorded.
func roundedCopy(x *Tensor, dt DType) *Tensor {
	c := x.Detach().dense()
	out := emptyOut("CausalAttention", x.backend, Float32, c.layout.Shape)
	roundF32Parallel(fs(out.storage), fs(c.storage)[c.layout.Offset:c.layout.Offset+c.Numel()], dt)
	return out
}

// causalAttentionAutocast is CausalAttention of float32 CPU tensors inside
// an autocast region of dt for T > 1: the numbers of
// causalAttentionComposed there (its three products autocast MatMuls),
// from the grouped kernels on rounded copies of q, k and v, which are all
// it saves.
func causalAttentionAutocast(q, k, v *Tensor, rb RoundedGroupedAttention, dt DType, offset int) *Tensor {
	b, h, t, d := q.Size(0), q.Size(1), q.Size(2), q.Size(3)
	hkv, s := k.Size(1), k.Size(2)
	qd, kd, vd := q.dense(), k.dense(), v.dense()
	qr, kr, vr := roundedCopy(qd, dt), roundedCopy(kd, dt), roundedCopy(vd, dt)
	kl, vl := kvLayout(kr), kvLayout(vr)
	y := emptyOut("CausalAttention", q.backend, Float32, []int{b, h, t, d})
	rb.GroupedAttentionRounded(y.storage, qr.storage, kr.storage, kl, vr.storage, vl, b, h, hkv, t, s, d, offset, dt)
	be := q.backend
	qs, ks, vs := qd.sink(), kd.sink(), vd.sink() // the closure keeps the rounded copies
	record("CausalAttention", y, []*Tensor{qd, kd, vd}, func(g *Tensor) {
		g = g.dense()
		var dq, dk, dv *Tensor
		if qs.requiresGrad {
			dq = emptyOut("CausalAttention", be, Float32, qs.shape)
		}
		if ks.requiresGrad {
			dk = emptyOut("CausalAttention", be, Float32, ks.shape)
		}
		if vs.requiresGrad {
			dv = emptyOut("CausalAttention", be, Float32, vs.shape)
		}
		rb.GroupedAttentionRoundedGrad(storageOrNil(dq), storageOrNil(dk), storageOrNil(dv), g.storage, qr.storage, kr.storage, kl, vr.storage, vl, b, h, hkv, t, s, d, offset, dt)
		qs.accumulate(dq)
		ks.accumulate(dk)
		vs.accumulate(dv)
	})
	return y
}
