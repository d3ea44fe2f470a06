package tensor

import (
	"iter"
	"math"

	"github.com/wickml/wick/internal/blas"
	"github.com/wickml/wick/internal/kernels"
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
// Causal attention cuts each head's T positions into blocks
// (causalBlocks) and gives the products only what the mask keeps: S and dP
// column block by column block, the columns [j0, j1) over the rows
// [j0, T) that may see them; Y and dQ row block by row block, the rows
// [i0, i1) over the depth [0, i1); dV and dK row block by row block, the
// rows [j0, j1) over the depth [j0, T) (row j of Pᵀ and dSᵀ is zero
// before j). That skips about half the work of full T×T products, and
// changes no bit of y, p or the gradient for finite inputs: what is left
// out is either cleared afterwards (S and dP above the diagonal) or
// products with the exact zeros of P and dS above it, and
// blas.SgemmRange adds the remaining terms in the full product's order.
//
// The exception is a non-finite value at a masked position: an Inf or NaN
// in V's row j (or, in the backward pass, in dY's, Q's or K's) multiplied
// by the zeros of the rows that may not see it gave NaN in all of those
// rows, as in PyTorch's masked attention written out (nanoGPT's non-flash
// path). Now it reaches only those of them in its own block; the rows of
// earlier blocks keep the values that the mask defines. Causality is the
// contract (row i depends on positions ≤ i only), and the rows at and
// after the position are non-finite either way, so a loss over all rows
// still comes out NaN.

func (cpuBackend) Attention(y, p, qkv Storage, b, t, nh, hs int, causal bool) {
	attention(fs(y), fs(p), fs(qkv), b, t, nh, hs, causal)
}

// AttentionNoWeights is Attention keeping no weights: each task computes
// its head's into a buffer of its own (AttentionRecomputer).
func (cpuBackend) AttentionNoWeights(y, qkv Storage, b, t, nh, hs int, causal bool) {
	attention(fs(y), nil, fs(qkv), b, t, nh, hs, causal)
}

// AttentionGradRecompute is AttentionGrad with each head's weights
// recomputed by attentionWeights, the forward pass's code
// (AttentionRecomputer).
func (cpuBackend) AttentionGradRecompute(dqkv, dy, qkv Storage, b, t, nh, hs int, causal bool) {
	attentionGrad(fs(dqkv), fs(dy), nil, fs(qkv), b, t, nh, hs, causal)
}

// attention is Attention on the buffers, the weights into ps or, with ps
// nil, into a buffer of each task's own.
func attention(ys, ps, xs []float32, b, t, nh, hs int, causal bool) {
	c := nh * hs
	parallel.For(b*nh, 1, func(lo, hi int) {
		var own []float32
		if ps == nil {
			own = make([]float32, t*t)
		}
		for task := lo; task < hi; task++ {
			bi, h := task/nh, task%nh
			base := bi*t*3*c + h*hs
			q, k, v := xs[base:], xs[base+c:], xs[base+2*c:]
			pr := own
			if ps != nil {
				pr = ps[task*t*t : (task+1)*t*t]
			}
			yh := ys[bi*t*c+h*hs:]
			attentionWeights(pr, q, k, t, c, hs, causal)
			if !causal {
				blas.Sgemm(false, false, t, hs, t, pr, t, v, 3*c, yh, c, false, 1)
				continue
			}
			// the rows [i0, i1) of P are zero from the column i1 on
			for i0, i1 := range causalBlocks(t) {
				blas.SgemmRange(false, false, i1-i0, hs, t, 0, i1, pr[i0*t:], t, v, 3*c, yh[i0*c:], c, 1)
			}
		}
	})
}

// attentionWeights writes the weights pr [T, T] of one head whose queries
// and keys are q and k (rows 3C apart): S = Q·Kᵀ·scale, the softmax of
// each row (causal: over the keys j ≤ i, zero after). Every element of pr
// is written, whatever it held.
func attentionWeights(pr, q, k []float32, t, c, hs int, causal bool) {
	scale := attentionScale(hs)
	if !causal {
		blas.Sgemm(false, true, t, t, hs, q, 3*c, k, 3*c, pr, t, false, 1)
		for i := range t {
			kernels.SoftmaxScaled(pr[i*t:(i+1)*t], scale)
		}
		return
	}
	// the keys [j0, j1) are seen by the queries [j0, T)
	for j0, j1 := range causalBlocks(t) {
		blas.Sgemm(false, true, t-j0, j1-j0, hs, q[j0*3*c:], 3*c, k[j0*3*c:], 3*c, pr[j0*t+j0:], t, false, 1)
	}
	for i := range t {
		softmaxCausalRow(pr[i*t:(i+1)*t], i+1, scale)
	}
}

// causalBlocks yields the blocks [i0, i1) into which causal attention cuts
// T positions: causalBlockRows(T) positions each, the last one taking the
// rest when fewer than half a block would be left after it.
//
// A product of 4 rows or fewer by a transposed operand would go down
// Sgemm's dot-product path, whose sums round differently from the full
// product's: with blocks of at least 10 only T ≤ 4 gives one, and then the
// full product does too.
func causalBlocks(t int) iter.Seq2[int, int] {
	n := causalBlockRows(t)
	return func(yield func(int, int) bool) {
		for i0 := 0; i0 < t; {
			i1 := i0 + n
			if t-i1 < n/2 {
				i1 = t
			}
			if !yield(i0, i1) {
				return
			}
			i0 = i1
		}
	}
}

// causalBlockRows returns the block of causal attention for T positions
// (causalBlockTest when set): T/10 rounded up to a multiple of 32, from 32
// to 96. Each block costs its products a call of sgemm (about 1 µs), and
// the blocks on the diagonal compute a triangle that is then cleared or
// multiplies zeros; the rule is the best of 8 to 256 measured at T = 64,
// 256, 512 and 1024 on the AVX-512 and AVX2 paths (docs/perf.md). Multiples
// of 32 make the column blocks of S and dP whole tiles of either path
// (32 and 16 columns) and 96 rows whole tiles (12 and 6 rows).
func causalBlockRows(t int) int {
	if causalBlockTest > 0 {
		return causalBlockTest
	}
	return min(96, max(32, (t/10+31)/32*32))
}

// causalBlockTest, when positive, is the block of causal attention
// whatever T; tests and benchmarks set it.
var causalBlockTest int

func (cpuBackend) AttentionGrad(dqkv, dy, p, qkv Storage, b, t, nh, hs int, causal bool) {
	attentionGrad(fs(dqkv), fs(dy), fs(p), fs(qkv), b, t, nh, hs, causal)
}

// attentionGrad is AttentionGrad on the buffers, the weights read from ps
// or, with ps nil, recomputed head by head (attentionWeights).
func attentionGrad(ds, gs, ps, xs []float32, b, t, nh, hs int, causal bool) {
	c := nh * hs
	scale := attentionScale(hs)
	parallel.For(b*nh, 1, func(lo, hi int) {
		dp := make([]float32, t*t)
		var own []float32
		if ps == nil {
			own = make([]float32, t*t)
		}
		for task := lo; task < hi; task++ {
			bi, h := task/nh, task%nh
			base := bi*t*3*c + h*hs
			q, k, v := xs[base:], xs[base+c:], xs[base+2*c:]
			dq, dk, dv := ds[base:], ds[base+c:], ds[base+2*c:]
			g := gs[bi*t*c+h*hs:]
			pr := own
			if ps != nil {
				pr = ps[task*t*t : (task+1)*t*t]
			} else {
				attentionWeights(pr, q, k, t, c, hs, causal)
			}
			if !causal {
				blas.Sgemm(true, false, t, hs, t, pr, t, g, c, dv, 3*c, false, 1)
				blas.Sgemm(false, true, t, t, hs, g, c, v, 3*c, dp, t, false, 1)
				for i := range t {
					kernels.SoftmaxGradScaled(dp[i*t:(i+1)*t], pr[i*t:(i+1)*t], scale)
				}
				blas.Sgemm(false, false, t, hs, t, dp, t, k, 3*c, dq, 3*c, false, 1)
				blas.Sgemm(true, false, t, hs, t, dp, t, q, 3*c, dk, 3*c, false, 1)
				continue
			}
			// the columns [j0, j1) of dP over the rows [j0, T)
			for j0, j1 := range causalBlocks(t) {
				blas.Sgemm(false, true, t-j0, j1-j0, hs, g[j0*c:], c, v[j0*3*c:], 3*c, dp[j0*t+j0:], t, false, 1)
			}
			// dS in the rows [i0, i1) over the columns [0, i1) (cleared
			// above the diagonal), over which dQ's rows sum; the rows of dV
			// over the rows [i0, T) of P, and of dK once dS is whole
			for i0, i1 := range causalBlocks(t) {
				for i := i0; i < i1; i++ {
					softmaxGradCausalRow(dp[i*t:i*t+i1], pr[i*t:i*t+i1], i+1, scale)
				}
				blas.SgemmRange(false, false, i1-i0, hs, t, 0, i1, dp[i0*t:], t, k, 3*c, dq[i0*3*c:], 3*c, 1)
				blas.SgemmRange(true, false, i1-i0, hs, t, i0, t, pr[i0:], t, g, c, dv[i0*3*c:], 3*c, 1)
			}
			for j0, j1 := range causalBlocks(t) {
				blas.SgemmRange(true, false, j1-j0, hs, t, j0, t, dp[j0:], t, q, 3*c, dk[j0*3*c:], 3*c, 1)
			}
		}
	})
}

// softmaxCausalRow replaces row[:n] by softmax(row[:n]·scale), the
// probabilities of a query that sees n positions, and clears row[n:]. It
// takes the row in up to a multiple of 8 (at most len(row)), with the
// positions from n on set to -Inf: their e^-Inf are zeros that change
// neither the sum nor the rest of the row, and the whole row runs in one
// call of the AVX2 row kernel.
func softmaxCausalRow(row []float32, n int, scale float32) {
	w := min((n+7)&^7, len(row))
	for j := n; j < w; j++ {
		row[j] = float32(math.Inf(-1))
	}
	kernels.SoftmaxScaled(row[:w], scale)
	clear(row[n:])
}

// softmaxGradCausalRow is softmaxGradRow on drow[:n] and prow[:n], the row
// of a query that sees n positions, and clears drow[n:]; prow[n:] must be
// zero, as softmaxCausalRow leaves it. It takes the rows in up to a
// multiple of 8 (at most their length), with drow zero from n on, so that
// the padding adds exact zeros to the dot product whatever drow held
// there.
func softmaxGradCausalRow(drow, prow []float32, n int, scale float32) {
	w := min((n+7)&^7, len(drow))
	clear(drow[n:w])
	kernels.SoftmaxGradScaled(drow[:w], prow[:w], scale)
	clear(drow[n:])
}
