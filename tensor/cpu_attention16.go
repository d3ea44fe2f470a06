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
