package nn

import (
	"fmt"
	"math"

	"github.com/chewxy/math32"
	"github.com/wickml/wick/tensor"
)

// CausalAttention is scaled dot-product attention with a causal mask whose
// queries start at position offset: one function for training (offset 0,
// S = T), the prefill of a key/value cache (offset 0) and cached decoding
// (offset = the positions already cached). q is [B, H, T, D]; k and v are
// [B, Hkv, S, D] with S = offset+T, the keys and values of positions
// 0 … S−1; query i (position offset+i) attends to keys 0 … offset+i. When
// Hkv < H (grouped-query and multi-query attention) Hkv must divide H and
// query head h reads key/value head h/(H/Hkv), like Hugging Face's
// repeat_kv. It returns [B, H, T, D]:
//
//	softmax(q·kᵀ/√D + mask)·v
//
// It is tensor.CausalAttention: one fused operation each way on the CPU and
// CUDA backends, reading each key/value head once for its group of query
// heads (no RepeatKV copies). It panics if the shapes disagree.
func CausalAttention(q, k, v *tensor.Tensor, offset int) *tensor.Tensor {
	checkAttentionShapes(q, k, v, offset)
	return tensor.CausalAttention(q, k, v, offset)
}

// checkAttentionShapes panics unless q, k, v and offset are as
// CausalAttention expects.
func checkAttentionShapes(q, k, v *tensor.Tensor, offset int) {
	if q.Dim() != 4 || k.Dim() != 4 || v.Dim() != 4 || offset < 0 {
		panic(&tensor.Error{Pkg: "nn", Op: "CausalAttention", Msg: fmt.Sprintf("expected q [B, H, T, D], k and v [B, Hkv, offset+T, D] and offset ≥ 0, got %v, %v, %v and %d", q.Shape(), k.Shape(), v.Shape(), offset)})
	}
	b, h, t, d := q.Size(0), q.Size(1), q.Size(2), q.Size(3)
	hkv, s := k.Size(1), k.Size(2)
	if k.Size(0) != b || v.Size(0) != b || k.Size(3) != d || v.Size(1) != hkv || v.Size(2) != s || s != offset+t || hkv <= 0 || h%hkv != 0 {
		panic(&tensor.Error{Pkg: "nn", Op: "CausalAttention", Msg: fmt.Sprintf("expected q [B, H, T, D], k and v [B, Hkv, offset+T, D] with Hkv dividing H, got %v, %v, %v and offset %d", q.Shape(), k.Shape(), v.Shape(), offset)})
	}
}

// causalAttention is CausalAttention composed from primitive ops as
// q.MatMul(kᵀ).MulScalar(1/√D), MaskedFill(−Inf), Softmax, MatMul(v), with
// drop, if not nil, applied to the attention weights after the softmax
// (GPT's attention dropout).
func causalAttention(q, k, v *tensor.Tensor, offset int, drop *Dropout) *tensor.Tensor {
	checkAttentionShapes(q, k, v, offset)
	h, t, d := q.Size(1), q.Size(2), q.Size(3)
	hkv, s := k.Size(1), k.Size(2)
	if hkv != h {
		k, v = RepeatKV(k, h/hkv), RepeatKV(v, h/hkv)
	}
	att := q.MatMul(k.Transpose(-2, -1)).MulScalar(float32(1 / math.Sqrt(float64(d))))
	if t > 1 {
		// query i sees keys j ≤ offset+i: mask j ≥ offset+i+1
		mask := tensor.Ones(t, s).Triu(offset + 1).To(q.Device())
		att = att.MaskedFill(mask, math32.Inf(-1))
	}
	att = att.Softmax(-1)
	if drop != nil {
		att = drop.Forward(att)
	}
	return att.MatMul(v)
}

// RepeatKV repeats each of the Hkv heads of x [B, Hkv, S, D] n times in a
// row, giving [B, Hkv·n, S, D] (Hugging Face's repeat_kv): head h of the
// result is head h/n of x. It panics if x is not 4-D or n < 1.
func RepeatKV(x *tensor.Tensor, n int) *tensor.Tensor {
	if x.Dim() != 4 || n < 1 {
		panic(&tensor.Error{Pkg: "nn", Op: "RepeatKV", Msg: fmt.Sprintf("expected x [B, Hkv, S, D] and n ≥ 1, got %v and %d", x.Shape(), n)})
	}
	if n == 1 {
		return x
	}
	b, hkv, s, d := x.Size(0), x.Size(1), x.Size(2), x.Size(3)
	return x.Unsqueeze(2).Expand(b, hkv, n, s, d).Reshape(b, hkv*n, s, d)
}
