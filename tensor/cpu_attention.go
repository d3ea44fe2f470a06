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
//
// Causal attention cuts each head's rows into blocks (causalBlockEnd) and
// gives each block only the part of the products the mask keeps: rows
// [i0, i1) of S and dP take the columns [0, i1), of Y and dQ the depth
// [0, i1); rows [j0, j1) of dV and dK take the depth [j0, T) (row j needs
// i ≥ j only). That skips about half the work of full T×T products, and
// changes no bit of y, p or the gradient for finite inputs: what is left
// out is either cleared afterwards (S and dP above the diagonal) or
// products with the exact zeros of P and dS above it, and
// blas.SgemmRange adds the remaining terms in the full product's order.
//
// The exception is a non-finite value at a masked position: an Inf or NaN
// in V's row j (or, in the backward pass, in dY's, Q's or K's) multiplied
// by the zeros of the rows that may not see it gave NaN in those rows, as
// in PyTorch's masked attention written out (nanoGPT's non-flash path).
// Now it reaches only the masked rows of its own block; the rows of
// earlier blocks keep the values that the mask defines. Causality is the
// contract (row i depends on positions ≤ i only), and the rows at and
// after the position are non-finite either way, so a loss over all rows
// still comes out NaN.

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
			yh := ys[bi*t*c+h*hs:]
			if !causal {
				blas.Sgemm(false, true, t, t, hs, q, 3*c, k, 3*c, pr, t, false, 1)
				for i := range t {
					softmaxRowScaled(pr[i*t:(i+1)*t], scale)
				}
				blas.Sgemm(false, false, t, hs, t, pr, t, v, 3*c, yh, c, false, 1)
				continue
			}
			// rows [i0, i1) see the keys [0, i1)
			for i0, i1 := 0, causalBlockEnd(0, t); i0 < t; i0, i1 = i1, causalBlockEnd(i1, t) {
				pb := pr[i0*t:]
				blas.Sgemm(false, true, i1-i0, i1, hs, q[i0*3*c:], 3*c, k, 3*c, pb, t, false, 1)
				for i := i0; i < i1; i++ {
					row := pr[i*t : (i+1)*t]
					softmaxRowScaled(row[:i+1], scale)
					clear(row[i+1:])
				}
				blas.SgemmRange(false, false, i1-i0, hs, t, 0, i1, pb, t, v, 3*c, yh[i0*c:], c, 1)
			}
		}
	})
}

// causalBlockEnd returns the end of the causal attention's block of rows
// that starts at row i0 of t: causalBlock rows, or the rest of them when
// fewer than causalBlock/2 would be left after it. The rows of a block
// take every product over the columns, or to the depth, of the block's
// last row, so the products skip most of the masked triangle at a few
// more sgemm calls per head.
//
// A block of 4 rows or fewer would send Sgemm's products by a transposed
// operand down its dot-product path, whose sums round differently from the
// full product's: with causalBlock ≥ 10 only t ≤ 4 makes such a block,
// and then the full product does too.
func causalBlockEnd(i0, t int) int {
	i1 := i0 + causalBlock
	if t-i1 < causalBlock/2 {
		return t
	}
	return i1
}

// causalBlock is the number of rows per block of the causal attention
// (see causalBlockEnd); tests and benchmarks change it.
var causalBlock = 16

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
			if !causal {
				blas.Sgemm(true, false, t, hs, t, pr, t, g, c, dv, 3*c, false, 1)
				blas.Sgemm(false, true, t, t, hs, g, c, v, 3*c, dp, t, false, 1)
				for i := range t {
					softmaxGradRow(dp[i*t:(i+1)*t], pr[i*t:(i+1)*t], scale)
				}
				blas.Sgemm(false, false, t, hs, t, dp, t, k, 3*c, dq, 3*c, false, 1)
				blas.Sgemm(true, false, t, hs, t, dp, t, q, 3*c, dk, 3*c, false, 1)
				continue
			}
			// rows [i0, i1) of dP and dS cover the columns [0, i1), and
			// dQ's rows sum over them; rows [j0, j1) of dV and dK sum over
			// the rows [j0, t) of P and dS
			for i0, i1 := 0, causalBlockEnd(0, t); i0 < t; i0, i1 = i1, causalBlockEnd(i1, t) {
				db := dp[i0*t:]
				blas.Sgemm(false, true, i1-i0, i1, hs, g[i0*c:], c, v, 3*c, db, t, false, 1)
				for i := i0; i < i1; i++ {
					drow := dp[i*t : i*t+i1]
					softmaxGradRow(drow[:i+1], pr[i*t:i*t+i+1], scale)
					clear(drow[i+1:])
				}
				blas.SgemmRange(false, false, i1-i0, hs, t, 0, i1, db, t, k, 3*c, dq[i0*3*c:], 3*c, 1)
			}
			for j0, j1 := 0, causalBlockEnd(0, t); j0 < t; j0, j1 = j1, causalBlockEnd(j1, t) {
				blas.SgemmRange(true, false, j1-j0, hs, t, j0, t, pr[j0:], t, g, c, dv[j0*3*c:], 3*c, 1)
				blas.SgemmRange(true, false, j1-j0, hs, t, j0, t, dp[j0:], t, q, 3*c, dk[j0*3*c:], 3*c, 1)
			}
		}
	})
}

// softmaxGradRow replaces drow, the gradient of a row of probabilities
// prow, by the gradient of the row's scores: prow⊙(drow − drow·prow)·scale.
func softmaxGradRow(drow, prow []float32, scale float32) {
	var dot float32
	for j, pv := range prow {
		dot += pv * drow[j]
	}
	for j, pv := range prow {
		drow[j] = pv * (drow[j] - dot) * scale
	}
}
