package tensor

import (
	"github.com/wickml/wick/internal/blas"
	"github.com/wickml/wick/internal/parallel"
)

// The CPU's fused attention (see AttentionQKV). One task per (batch, head)
// pair on the shared pool; within a task the four products are single-
// threaded sgemm calls on the heads in place: a head's queries are the
// T×hs matrix at qkv[b, 0, h·hs] with row stride 3C, its keys at column
// offset C and its values at 2C.
//
//	forward:  S = Q·Kᵀ·scale (causal: j ≤ i), P = softmax(S), Y = P·V
//	backward: dV = Pᵀ·dY, dP = dY·Vᵀ, dS = P⊙(dP − rowsum(dP⊙P))·scale,
//	          dQ = dS·K, dK = dSᵀ·Q

func (cpuBackend) Attention(y, p, qkv Storage, b, t, nh, hs int, causal bool) {
	ys, ps, xs := fs(y), fs(p), fs(qkv)
	c := nh * hs
	scale := attentionScale(hs)
	parallel.For(b*nh, 1, func(lo, hi int) {
		for task := lo; task < hi; task++ {
			bi, h := task/nh, task%nh
			base := bi*t*3*c + h*hs
			q, k, v := xs[base:], xs[base+c:], xs[base+2*c:]
			pr := ps[task*t*t : (task+1)*t*t]
			blas.Sgemm(false, true, t, t, hs, q, 3*c, k, 3*c, pr, t, false, 1)
			for i := range t {
				row := pr[i*t : (i+1)*t]
				n := t
				if causal {
					n = i + 1
				}
				softmaxRowScaled(row[:n], scale)
				clear(row[n:])
			}
			blas.Sgemm(false, false, t, hs, t, pr, t, v, 3*c, ys[bi*t*c+h*hs:], c, false, 1)
		}
	})
}

// softmaxRowScaled replaces row by softmax(row·scale) (the product rounded
// to float32 first, as a separate multiply would), with the vector kernels
// of cpu_fast.go for the scaling, the maximum, the exponentials and the
// normalisation.
func softmaxRowScaled(row []float32, scale float32) {
	scaleF32(row, scale)
	m := rowMax4(row)
	if m != m || m > 3.4e38 || m < -3.4e38 { // NaN or ±Inf: leave it to exp
		m = 0
	}
	scaleF32(row, 1/expSub(row, m))
}

func (cpuBackend) AttentionGrad(dqkv, dy, p, qkv Storage, b, t, nh, hs int, causal bool) {
	ds, gs, ps, xs := fs(dqkv), fs(dy), fs(p), fs(qkv)
	c := nh * hs
	scale := attentionScale(hs)
	parallel.For(b*nh, 1, func(lo, hi int) {
		dp := make([]float32, t*t)
		for task := lo; task < hi; task++ {
			bi, h := task/nh, task%nh
			base := bi*t*3*c + h*hs
			q, k, v := xs[base:], xs[base+c:], xs[base+2*c:]
			dq, dk, dv := ds[base:], ds[base+c:], ds[base+2*c:]
			g := gs[bi*t*c+h*hs:]
			pr := ps[task*t*t : (task+1)*t*t]
			blas.Sgemm(true, false, t, hs, t, pr, t, g, c, dv, 3*c, false, 1)
			blas.Sgemm(false, true, t, t, hs, g, c, v, 3*c, dp, t, false, 1)
			for i := range t {
				n := t
				if causal {
					n = i + 1
				}
				prow, drow := pr[i*t:i*t+n], dp[i*t:(i+1)*t]
				var dot float32
				for j, pv := range prow {
					dot += pv * drow[j]
				}
				for j, pv := range prow {
					drow[j] = pv * (drow[j] - dot) * scale
				}
				clear(drow[n:])
			}
			blas.Sgemm(false, false, t, hs, t, dp, t, k, 3*c, dq, 3*c, false, 1)
			blas.Sgemm(true, false, t, hs, t, dp, t, q, 3*c, dk, 3*c, false, 1)
		}
	})
}
