package tensor

import (
	"github.com/wickml/wick/internal/blas"
	"github.com/wickml/wick/internal/kernels"
	"github.com/wickml/wick/internal/parallel"
)

// The CPU's fused attention inside an autocast region (RoundedAttention):
// the float32 kernels of cpu_attention.go on operands rounded to the
// region's dtype, which gives the numbers of the composition that
// AttentionQKV stands for, each product an autocast MatMul (see
// attentionAutocast):
//
//	forward:  Q̃, K̃, Ṽ = round(Q, K, V); S = Q̃·K̃ᵀ·scale (causal: j ≤ i);
//	          P = softmax(S) in float32; Y = round(P)·Ṽ
//	backward: dỸ = round(dY); dV = round(P)ᵀ·dỸ; dP = dỸ·Ṽᵀ;
//	          dS = round(P⊙(dP − rowsum(dP⊙P))·scale);
//	          dQ = dS·K̃, dK = dSᵀ·Q̃
//
// Products of two bfloat16 (or float16) values are exact in float32, so the
// float32 sgemm on the rounded values computes what the 16-bit products
// of an autocast MatMul compute, the float32 sums in another order. The
// probabilities are kept for neither pass: the backward pass recomputes
// them from the rounded qkv, which is all it saves.

func (cpuBackend) AttentionRounded(y, qkvr, qkv Storage, b, t, nh, hs int, causal bool, dt DType) {
	attentionRounded(fs(y), fs(qkvr), fs(qkv), b, t, nh, hs, causal, dt)
}

func (cpuBackend) AttentionRoundedGrad(dqkv, dy, qkvr Storage, b, t, nh, hs int, causal bool, dt DType) {
	attentionRoundedGrad(fs(dqkv), fs(dy), fs(qkvr), b, t, nh, hs, causal, dt)
}

// attentionRounded writes xr = round(xs) and y.
func attentionRounded(ys, xr, xs []float32, b, t, nh, hs int, causal bool, dt DType) {
	c := nh * hs
	roundF32Parallel(xr, xs, dt)
	parallel.For(b*nh, 1, func(lo, hi int) {
		pr := make([]float32, t*t)
		for task := lo; task < hi; task++ {
			bi, h := task/nh, task%nh
			base := bi*t*3*c + h*hs
			q, k, v := xr[base:], xr[base+c:], xr[base+2*c:]
			yh := ys[bi*t*c+h*hs:]
			attentionWeights(pr, q, k, t, c, hs, causal)
			if !causal {
				roundF32(pr, pr, dt)
				blas.Sgemm(false, false, t, hs, t, pr, t, v, 3*c, yh, c, false, 1)
				continue
			}
			for i := range t {
				row := pr[i*t : i*t+i+1] // zero after i
				roundF32(row, row, dt)
			}
			for i0, i1 := range causalBlocks(t) {
				blas.SgemmRange(false, false, i1-i0, hs, t, 0, i1, pr[i0*t:], t, v, 3*c, yh[i0*c:], c, 1)
			}
		}
	})
}

// attentionRoundedGrad is attentionGrad on the rounded qkv xr, with the
// weights recomputed from it, dY rounded into a buffer gr (of dY's size:
// the backward pass's, recycled after it), the weights into a buffer of
// each task's own and dS rounded in place before its products.
func attentionRoundedGrad(ds, gs, xr []float32, b, t, nh, hs int, causal bool, dt DType) {
	c := nh * hs
	scale := attentionScale(hs)
	gr := pooledF32(len(gs), false).f
	roundF32Parallel(gr, gs, dt)
	parallel.For(b*nh, 1, func(lo, hi int) {
		buf := make([]float32, 3*t*t)
		dp, pr, p16 := buf[:t*t], buf[t*t:2*t*t], buf[2*t*t:]
		for task := lo; task < hi; task++ {
			bi, h := task/nh, task%nh
			base := bi*t*3*c + h*hs
			q, k, v := xr[base:], xr[base+c:], xr[base+2*c:]
			dq, dk, dv := ds[base:], ds[base+c:], ds[base+2*c:]
			g := gr[bi*t*c+h*hs:]
			attentionWeights(pr, q, k, t, c, hs, causal)
			if !causal {
				roundF32(p16, pr, dt)
			} else {
				for i := range t { // p16 stays zero after i, as pr is
					roundF32(p16[i*t:i*t+i+1], pr[i*t:i*t+i+1], dt)
				}
			}
			if !causal {
				blas.Sgemm(true, false, t, hs, t, p16, t, g, c, dv, 3*c, false, 1)
				blas.Sgemm(false, true, t, t, hs, g, c, v, 3*c, dp, t, false, 1)
				for i := range t {
					kernels.SoftmaxGradScaled(dp[i*t:(i+1)*t], pr[i*t:(i+1)*t], scale)
				}
				roundF32(dp, dp, dt)
				blas.Sgemm(false, false, t, hs, t, dp, t, k, 3*c, dq, 3*c, false, 1)
				blas.Sgemm(true, false, t, hs, t, dp, t, q, 3*c, dk, 3*c, false, 1)
				continue
			}
			for j0, j1 := range causalBlocks(t) {
				blas.Sgemm(false, true, t-j0, j1-j0, hs, g[j0*c:], c, v[j0*3*c:], 3*c, dp[j0*t+j0:], t, false, 1)
			}
			for i0, i1 := range causalBlocks(t) {
				for i := i0; i < i1; i++ {
					softmaxGradCausalRow(dp[i*t:i*t+i1], pr[i*t:i*t+i1], i+1, scale)
					row := dp[i*t : i*t+i+1] // zero after i
					roundF32(row, row, dt)
				}
				blas.SgemmRange(false, false, i1-i0, hs, t, 0, i1, dp[i0*t:], t, k, 3*c, dq[i0*3*c:], 3*c, 1)
				blas.SgemmRange(true, false, i1-i0, hs, t, i0, t, p16[i0:], t, g, c, dv[i0*3*c:], 3*c, 1)
			}
			for j0, j1 := range causalBlocks(t) {
				blas.SgemmRange(true, false, j1-j0, hs, t, j0, t, dp[j0:], t, q, 3*c, dk[j0*3*c:], 3*c, 1)
			}
		}
	})
}

// roundF32 writes into dst (of src's length; it may be src) the float32
// values of src's elements rounded to dt (BFloat16 or Float16) as the cast
// rounds them: round to nearest even, NaN kept a NaN.
func roundF32(dst, src []float32, dt DType) {
	if dt == BFloat16 {
		kernels.RoundBF16(dst, src)
		return
	}
	h := halfOf(dt)
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = h.to(h.from(v))
	}
}

// roundF32Parallel is roundF32 split across the worker pool.
func roundF32Parallel(dst, src []float32, dt DType) {
	parallel.For(len(src), 1<<14, func(lo, hi int) { roundF32(dst[lo:hi], src[lo:hi], dt) })
}

// RoundedGroupedAttention (CausalAttention inside a region, T > 1): the
// CPU's gqaCausal and gqaCausalGrad on q, k and v rounded by the caller,
// with the weights rounded before their product with V, dY rounded here
// and dS rounded before its products, as RoundedAttention does for the
// packed heads.

func (cpuBackend) GroupedAttentionRounded(y, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int, dt DType) {
	gqaCausalRounded(fs(y), fs(q), fs(k), kl, fs(v), vl, b, h, hkv, t, s, d, offset, dt)
}

func (cpuBackend) GroupedAttentionRoundedGrad(dq, dk, dv, dy, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int, dt DType) {
	gs := fs(dy)
	gr := pooledF32(len(gs), false).f // the backward pass's temporary
	roundF32Parallel(gr, gs, dt)
	gqaCausalRoundedGrad(optF(dq), optF(dk), optF(dv), gr, fs(q), fs(k), kl, fs(v), vl, b, h, hkv, t, s, d, offset, dt)
}

// gqaCausalRounded is gqaCausal keeping no weights, each head's rounded
// to dt before the product with V.
func gqaCausalRounded(ys, qs, ks []float32, kl Layout, vs []float32, vl Layout, b, h, hkv, t, s, d, offset int, dt DType) {
	g := h / hkv
	parallel.For(b*h, 1, func(lo, hi int) {
		pr := make([]float32, t*s)
		for task := lo; task < hi; task++ {
			kv := task/h*hkv + task%h/g
			q, y := qs[task*t*d:], ys[task*t*d:]
			k, v := ks[kl.Offset+kv*kl.Strides[0]:], vs[vl.Offset+kv*vl.Strides[0]:]
			gqaCausalWeights(pr, q, k, kl, t, s, d, offset)
			for i := range t {
				row := pr[i*s : i*s+offset+i+1] // zero after
				roundF32(row, row, dt)
			}
			for i0, i1 := range causalBlocks(t) {
				blas.SgemmRange(false, false, i1-i0, d, s, 0, offset+i1, pr[i0*s:], s, v, vl.Strides[1], y[i0*d:], d, 1)
			}
		}
	})
}

// gqaCausalRoundedGrad is gqaCausalGrad with the weights recomputed, dY
// rounded by the caller (dys), the weights rounded into a buffer of the
// task's own for dV and dS rounded in place before dQ and dK.
func gqaCausalRoundedGrad(dqs, dks, dvs, dys, qs, ks []float32, kl Layout, vs []float32, vl Layout, b, h, hkv, t, s, d, offset int, dt DType) {
	g := h / hkv
	scale := attentionScale(d)
	parallel.For(b*hkv, 1, func(lo, hi int) {
		buf := make([]float32, 3*t*s)
		dp, pr, p16 := buf[:t*s], buf[t*s:2*t*s], buf[2*t*s:] // p16 stays zero where masked
		for kv := lo; kv < hi; kv++ {
			k, v := ks[kl.Offset+kv*kl.Strides[0]:], vs[vl.Offset+kv*vl.Strides[0]:]
			for hh := range g {
				task := kv/hkv*h + kv%hkv*g + hh
				q, dy := qs[task*t*d:], dys[task*t*d:]
				gqaCausalWeights(pr, q, k, kl, t, s, d, offset)
				if dvs != nil {
					for i := range t {
						n := offset + i + 1
						roundF32(p16[i*s:i*s+n], pr[i*s:i*s+n], dt)
					}
					blas.Sgemm(true, false, s, d, t, p16, s, dy, d, dvs[kv*s*d:], d, hh > 0, 1) // dV += P̃ᵀ·dỸ
				}
				if dqs == nil && dks == nil {
					continue
				}
				if offset > 0 {
					blas.Sgemm(false, true, t, offset, d, dy, d, v, vl.Strides[1], dp, s, false, 1)
				}
				for j0, j1 := range causalBlocks(t) {
					blas.Sgemm(false, true, t-j0, j1-j0, d, dy[j0*d:], d, v[(offset+j0)*vl.Strides[1]:], vl.Strides[1], dp[j0*s+offset+j0:], s, false, 1)
				}
				for i := range t {
					softmaxGradCausalRow(dp[i*s:(i+1)*s], pr[i*s:(i+1)*s], offset+i+1, scale)
					row := dp[i*s : i*s+offset+i+1] // zero after
					roundF32(row, row, dt)
				}
				if dqs != nil {
					for i0, i1 := range causalBlocks(t) {
						blas.SgemmRange(false, false, i1-i0, d, s, 0, offset+i1, dp[i0*s:], s, k, kl.Strides[1], dqs[task*t*d+i0*d:], d, 1)
					}
				}
				if dks != nil {
					blas.Sgemm(true, false, s, d, t, dp, s, q, d, dks[kv*s*d:], d, hh > 0, 1) // dK += dSᵀ·Q̃
				}
			}
		}
	})
}
