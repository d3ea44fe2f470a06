//go:build cuda

package cuda

import (
	"math"

	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

// Fused multi-head attention on a packed qkv [B, T, 3·C] (the optional
// fast path of tensor.AttentionQKV): the four matrix products of each
// (batch, head) pair are strided-batched cuBLAS calls that read the heads
// in place, batched over the heads (one call per batch element) or over
// the batch (one call per head), whichever makes fewer calls; the softmax
// and its gradient are the kernels of csrc/attention.cu. The same
// operations as the CPU backend's (tensor/cpu_attention.go):
//
//	forward:  S = Q·Kᵀ, P = softmax(S·scale) (causal: j ≤ i), Y = P·V
//	backward: dV = Pᵀ·dY, dP = dY·Vᵀ, dS = P⊙(dP − rowsum(dP⊙P))·scale,
//	          dQ = dS·K, dK = dSᵀ·Q

// gemm runs the calls of one product of the plan: C = op(X)·op(Y) on the
// heads' matrices (attnPlan.product).
func (b *backend) gemm(op string, p attnPlan, tx, ty bool, m, n, k int, X cu.DevicePtr, xm headMats, Y cu.DevicePtr, ym headMats, C cu.DevicePtr, cm headMats) {
	for _, call := range p.product(tx, ty, m, n, k, xm, ym, cm) {
		b.sgemm(op, call, Y, X, C)
	}
}

func (b *backend) attnChecks(op string, t, hs int) {
	if t > math.MaxInt32 || hs > math.MaxInt32 {
		panic(&tensor.Error{Op: op, Msg: "dims too large for cuBLAS"})
	}
}

// Attention computes y [B, T, nh·hs] and the attention weights
// p [B, nh, T, T] from the contiguous packed qkv [B, T, 3·nh·hs].
func (b *backend) Attention(y, p, qkv tensor.Storage, bs, t, nh, hs int, causal bool) {
	const op = "AttentionQKV"
	defer b.d.enter()()
	c := nh * hs
	ys, ps, xs := b.rows(op, y, bs*t*c), b.rows(op, p, bs*nh*t*t), b.rows(op, qkv, bs*t*3*c)
	defer keepAlive(ys, ps, xs)
	if bs*t*nh*hs == 0 {
		return
	}
	b.attnChecks(op, t, hs)
	pl := newAttnPlan(bs, t, nh, hs)
	x, pp, yp := xs.ptr(op, 0), ps.ptr(op, 0), ys.ptr(op, 0)
	b.gemm(op, pl, false, true, t, t, hs, x, pl.qkvMat(0), x, pl.qkvMat(1), pp, pl.probMat())
	a := &args{}
	a.ptr(pp).i64(bs * nh * t).i64(t).f32(attentionScale(hs)).i32(boolInt(causal))
	b.d.launchRows(op, b.d.k.attnSoftmax, bs*nh*t, a)
	b.gemm(op, pl, false, false, t, hs, t, pp, pl.probMat(), x, pl.qkvMat(2), yp, pl.qkvMat(-1))
	b.d.syncIfDebugging(op)
}

// AttentionGrad writes the gradient of qkv into dqkv (every element) given
// the gradient dy of y and the saved weights p.
func (b *backend) AttentionGrad(dqkv, dy, p, qkv tensor.Storage, bs, t, nh, hs int, causal bool) {
	const op = "AttentionQKVGrad"
	defer b.d.enter()()
	c := nh * hs
	ds, gs := b.rows(op, dqkv, bs*t*3*c), b.rows(op, dy, bs*t*c)
	ps, xs := b.rows(op, p, bs*nh*t*t), b.rows(op, qkv, bs*t*3*c)
	defer keepAlive(ds, gs, ps, xs)
	if bs*t*nh*hs == 0 {
		return
	}
	b.attnChecks(op, t, hs)
	pl := newAttnPlan(bs, t, nh, hs)
	dp, err := b.d.alloc.block(int64(bs*nh*t*t) * 4)
	if err != nil {
		b.d.fail(op, "device memory for dP", err)
	}
	defer b.d.alloc.put(dp) // later users queue behind these kernels
	dpp := cu.DevicePtr(dp.ptr)
	x, d, g, pp := xs.ptr(op, 0), ds.ptr(op, 0), gs.ptr(op, 0), ps.ptr(op, 0)
	b.gemm(op, pl, true, false, t, hs, t, pp, pl.probMat(), g, pl.qkvMat(-1), d, pl.qkvMat(2))  // dV = Pᵀ·dY
	b.gemm(op, pl, false, true, t, t, hs, g, pl.qkvMat(-1), x, pl.qkvMat(2), dpp, pl.probMat()) // dP = dY·Vᵀ
	a := &args{}
	a.ptr(dpp).ptr(pp).i64(bs * nh * t).i64(t).f32(attentionScale(hs)).i32(boolInt(causal))
	b.d.launchRows(op, b.d.k.attnSoftmaxGrad, bs*nh*t, a)
	b.gemm(op, pl, false, false, t, hs, t, dpp, pl.probMat(), x, pl.qkvMat(1), d, pl.qkvMat(0)) // dQ = dS·K
	b.gemm(op, pl, true, false, t, hs, t, dpp, pl.probMat(), x, pl.qkvMat(0), d, pl.qkvMat(1))  // dK = dSᵀ·Q
	b.d.syncIfDebugging(op)
}

// attentionScale is 1/√hs rounded like package tensor's.
func attentionScale(hs int) float32 { return float32(1 / math.Sqrt(float64(hs))) }
