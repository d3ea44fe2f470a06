//go:build cuda

package cuda

import (
	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

// The fused kernels of the Llama family's layers (package tensor's
// RMSNormer, Rotator, SwiGLUer and GroupedAttention): csrc/rmsnorm.cu,
// rotary.cu, swiglu.cu and gqa.cu, the same operations as the CPU
// backend's (tensor/cpu_fused_llama.go).

// RMSNorm writes y = w·(x·r) for each row and saves each row's r.
func (b *backend) RMSNorm(dst, rstd, x, w tensor.Storage, rows, cols int, eps float32) {
	const op = "RMSNorm"
	defer b.d.enter()()
	d, rs, xs := b.rows(op, dst, rows*cols), b.rows(op, rstd, rows), b.rows(op, x, rows*cols)
	defer keepAlive(d, rs, xs, w)
	a := &args{}
	a.ptr(d.ptr(op, 0)).ptr(rs.ptr(op, 0)).ptr(xs.ptr(op, 0)).ptr(b.opt(op, w, cols)).i64(rows).i64(cols).f32(eps)
	b.d.launchRows(op, b.d.k.llama.rmsnorm, rows, a)
}

// RMSNormGrad writes dx and adds into dw (each nil if not wanted). dw is
// a column sum over all rows, formed in two stages like LayerNormGrad's.
func (b *backend) RMSNormGrad(dx, dw, g, x, rstd, w tensor.Storage, rows, cols int) {
	const op = "RMSNormGrad"
	defer b.d.enter()()
	gs, xs, rs := b.rows(op, g, rows*cols), b.rows(op, x, rows*cols), b.rows(op, rstd, rows)
	defer keepAlive(dx, dw, gs, xs, rs, w)
	if rows == 0 || cols == 0 {
		return
	}
	if dx != nil {
		a := &args{}
		a.ptr(b.opt(op, dx, rows*cols)).ptr(gs.ptr(op, 0)).ptr(xs.ptr(op, 0)).ptr(rs.ptr(op, 0)).ptr(b.opt(op, w, cols)).i64(rows).i64(cols)
		b.d.launchRows(op, b.d.k.llama.rmsnormDx, rows, a)
	}
	if dw == nil {
		return
	}
	chunk := max(32, (rows*cols+65535)/65536, (rows+65534)/65535)
	chunks := (rows + chunk - 1) / chunk
	part := b.scratch(op, int64(chunks)*int64(cols)*8)
	defer b.d.alloc.put(part) // later users queue behind these kernels
	a := &args{}
	a.ptr(cu.DevicePtr(part.ptr)).ptr(gs.ptr(op, 0)).ptr(xs.ptr(op, 0)).ptr(rs.ptr(op, 0)).i64(rows).i64(cols).i64(chunk)
	b.d.launch(op, b.d.k.llama.rmsnormDwPart, (cols+threads-1)/threads, chunks, threads, a)
	a = &args{}
	a.ptr(b.opt(op, dw, cols)).ptr(cu.DevicePtr(part.ptr)).i64(chunks).i64(cols)
	b.d.launch1D(op, b.d.k.llama.rmsnormDwSum, cols, a)
}

// Rotary writes the rotary embedding of x (read through xl's strides) or
// its transpose into the contiguous dst.
func (b *backend) Rotary(dst, x tensor.Storage, xl tensor.Layout, cos, sin tensor.Storage, transpose bool) {
	const op = "ApplyRotary"
	defer b.d.enter()()
	sh := xl.Shape
	n := numel(sh)
	d, xs := b.rows(op, dst, n), b.view(op, x, xl)
	cs, ss := b.rows(op, cos, sh[2]*sh[3]), b.rows(op, sin, sh[2]*sh[3])
	defer keepAlive(d, xs, cs, ss)
	if n == 0 {
		return
	}
	a := &args{}
	a.ptr(d.ptr(op, 0)).ptr(xs.ptr(op, xl.Offset)).i64(sh[0]).i64(sh[1]).i64(sh[2]).i64(sh[3])
	a.i64(xl.Strides[0]).i64(xl.Strides[1]).i64(xl.Strides[2]).ptr(cs.ptr(op, 0)).ptr(ss.ptr(op, 0)).i32(boolInt(transpose))
	b.d.launch1D(op, b.d.k.llama.rotary, n/2, a)
}

// SwiGLU writes gate·σ(gate)·up.
func (b *backend) SwiGLU(dst, gate, up tensor.Storage, n int) {
	const op = "SwiGLU"
	defer b.d.enter()()
	d, gs, us := b.rows(op, dst, n), b.rows(op, gate, n), b.rows(op, up, n)
	defer keepAlive(d, gs, us)
	a := &args{}
	a.ptr(d.ptr(op, 0)).ptr(gs.ptr(op, 0)).ptr(us.ptr(op, 0)).i64(n)
	b.d.launch1D(op, b.d.k.llama.swiglu, n, a)
}

// SwiGLUGrad writes the gradients of gate and up (each nil if not wanted).
func (b *backend) SwiGLUGrad(dgate, dup, g, gate, up tensor.Storage, n int) {
	const op = "SwiGLUGrad"
	defer b.d.enter()()
	gs, as, us := b.rows(op, g, n), b.rows(op, gate, n), b.rows(op, up, n)
	defer keepAlive(dgate, dup, gs, as, us)
	if dgate == nil && dup == nil {
		return
	}
	a := &args{}
	a.ptr(b.opt(op, dgate, n)).ptr(b.opt(op, dup, n)).ptr(gs.ptr(op, 0)).ptr(as.ptr(op, 0)).ptr(us.ptr(op, 0)).i64(n)
	b.d.launch1D(op, b.d.k.llama.swigluGrad, n, a)
}

// gqaShape holds the matrices of grouped-query attention's products: one
// strided batch of B·Hkv calls, each on the m = g·T query rows of a group
// of g = H/Hkv query heads (consecutive in q, so one m×D matrix) and the
// S×D keys and values they share.
type gqaShape struct {
	batch, m, s, d int
}

// q, kv and p are the (offset, leading dimension, batch stride) of the
// query-shaped (q, y, dy, dq), contiguous key-shaped (dk, dv) and
// weight-shaped (p, dP) matrices; in is that of keys or values read
// through their layout (the pointer points at its offset).
func (g gqaShape) q() [3]int                 { return [3]int{0, g.d, g.m * g.d} }
func (g gqaShape) kv() [3]int                { return [3]int{0, g.d, g.s * g.d} }
func (g gqaShape) p() [3]int                 { return [3]int{0, g.s, g.m * g.s} }
func (g gqaShape) in(l tensor.Layout) [3]int { return [3]int{0, l.Strides[1], l.Strides[0]} }

// gqaGemm runs C = op(X)·op(Y) over the batch (rowMajor's operands).
func (b *backend) gqaGemm(op string, gs gqaShape, tx, ty bool, m, n, k int, X cu.DevicePtr, xm [3]int, Y cu.DevicePtr, ym [3]int, C cu.DevicePtr, cm [3]int) {
	b.sgemm(op, rowMajor(tx, ty, m, n, k, xm, ym, cm, gs.batch), Y, X, C)
}

// GroupedAttention writes y [B, H, T, D] and the weights p [B, H, T, S].
func (b *backend) GroupedAttention(y, p, q, k tensor.Storage, kl tensor.Layout, v tensor.Storage, vl tensor.Layout, bs, h, hkv, t, s, d, offset int) {
	const op = "CausalAttention"
	defer b.d.enter()()
	ys, ps, qs := b.rows(op, y, bs*h*t*d), b.rows(op, p, bs*h*t*s), b.rows(op, q, bs*h*t*d)
	ks, vs := b.view(op, k, kl), b.view(op, v, vl)
	defer keepAlive(ys, ps, qs, ks, vs)
	if bs*h*t*d == 0 || s == 0 {
		return
	}
	b.attnChecks(op, max(h/hkv*t, s), max(d, kl.Strides[1], vl.Strides[1]))
	gs := gqaShape{batch: bs * hkv, m: h / hkv * t, s: s, d: d}
	pp := ps.ptr(op, 0)
	b.gqaGemm(op, gs, false, true, gs.m, s, d, qs.ptr(op, 0), gs.q(), ks.ptr(op, kl.Offset), gs.in(kl), pp, gs.p()) // S = Q·Kᵀ
	a := &args{}
	a.ptr(pp).i64(bs * h * t).i64(t).i64(s).i64(offset).f32(attentionScale(d))
	b.d.launchRows(op, b.d.k.llama.gqaSoftmax, bs*h*t, a)
	b.gqaGemm(op, gs, false, false, gs.m, d, s, pp, gs.p(), vs.ptr(op, vl.Offset), gs.in(vl), ys.ptr(op, 0), gs.q()) // Y = P·V
	b.d.syncIfDebugging(op)
}

// GroupedAttentionGrad writes dq, dk and dv (each nil if not wanted).
func (b *backend) GroupedAttentionGrad(dq, dk, dv, dy, p, q, k tensor.Storage, kl tensor.Layout, v tensor.Storage, vl tensor.Layout, bs, h, hkv, t, s, d, offset int) {
	const op = "CausalAttentionGrad"
	defer b.d.enter()()
	gys, ps, qs := b.rows(op, dy, bs*h*t*d), b.rows(op, p, bs*h*t*s), b.rows(op, q, bs*h*t*d)
	ks, vs := b.view(op, k, kl), b.view(op, v, vl)
	defer keepAlive(dq, dk, dv, gys, ps, qs, ks, vs)
	if bs*h*t*d == 0 || s == 0 {
		return
	}
	b.attnChecks(op, max(h/hkv*t, s), max(d, kl.Strides[1], vl.Strides[1]))
	gs := gqaShape{batch: bs * hkv, m: h / hkv * t, s: s, d: d}
	g, pp := gys.ptr(op, 0), ps.ptr(op, 0)
	if dv != nil {
		b.gqaGemm(op, gs, true, false, s, d, gs.m, pp, gs.p(), g, gs.q(), b.opt(op, dv, bs*hkv*s*d), gs.kv()) // dV = Pᵀ·dY
	}
	if dq == nil && dk == nil {
		b.d.syncIfDebugging(op)
		return
	}
	dp := b.scratch(op, int64(bs*h*t*s)*4)
	defer b.d.alloc.put(dp) // later users queue behind these kernels
	dpp := cu.DevicePtr(dp.ptr)
	b.gqaGemm(op, gs, false, true, gs.m, s, d, g, gs.q(), vs.ptr(op, vl.Offset), gs.in(vl), dpp, gs.p()) // dP = dY·Vᵀ
	a := &args{}
	a.ptr(dpp).ptr(pp).i64(bs * h * t).i64(t).i64(s).i64(offset).f32(attentionScale(d))
	b.d.launchRows(op, b.d.k.llama.gqaSoftmaxGrad, bs*h*t, a)
	if dq != nil {
		b.gqaGemm(op, gs, false, false, gs.m, d, s, dpp, gs.p(), ks.ptr(op, kl.Offset), gs.in(kl), b.opt(op, dq, bs*h*t*d), gs.q()) // dQ = dS·K
	}
	if dk != nil {
		b.gqaGemm(op, gs, true, false, s, d, gs.m, dpp, gs.p(), qs.ptr(op, 0), gs.q(), b.opt(op, dk, bs*hkv*s*d), gs.kv()) // dK = dSᵀ·Q
	}
	b.d.syncIfDebugging(op)
}
