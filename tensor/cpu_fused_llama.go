package tensor

import (
	"github.com/wickml/wick/internal/blas"
	"github.com/wickml/wick/internal/kernels"
	"github.com/wickml/wick/internal/parallel"
)

// The CPU backend's fused Llama-family kernels (fused_llama.go): one pass
// over each row (RMSNorm, rotary embeddings) or element (SwiGLU) where the
// compositions take three to six, and grouped-query attention as matrix
// products on the heads in place with the mask, scale and softmax in one
// pass (the row kernels of the packed attention, cpu_attention.go): for
// T > 1 blocked like the packed attention so that the products skip what
// the causal mask hides, for one query (decoding) the backend's MatMul
// over the B·Hkv groups.

func (cpuBackend) RMSNorm(dst, rstd, x, w Storage, rows, cols int, eps float32) {
	d, rs, xs, ws := fs(dst), fs(rstd), fs(x), optF(w)
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			rs[r] = kernels.RMSNormRow(d[r*cols:(r+1)*cols], xs[r*cols:(r+1)*cols], ws, eps)
		}
	})
}

func (cpuBackend) RMSNormGrad(dx, dw, g, x, rstd, w Storage, rows, cols int) {
	gs, xs, rs, ws := fs(g), fs(x), fs(rstd), optF(w)
	if dx != nil {
		dxs := fs(dx)
		parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				gr, xr, dr := gs[r*cols:(r+1)*cols], xs[r*cols:(r+1)*cols], dxs[r*cols:(r+1)*cols]
				inv := float64(rs[r])
				var dot float64
				for j := range gr {
					dh := float64(gr[j])
					if ws != nil {
						dh *= float64(ws[j])
					}
					dot += dh * float64(xr[j])
				}
				c := inv * inv * inv * dot / float64(cols)
				for j := range gr {
					dh := float64(gr[j])
					if ws != nil {
						dh *= float64(ws[j])
					}
					dr[j] = float32(inv*dh - float64(xr[j])*c)
				}
			}
		})
	}
	if dw == nil {
		return
	}
	dws := fs(dw)
	parallelFor(cols, 64, func(lo, hi int) {
		acc := make([]float64, hi-lo)
		for r := range rows {
			inv := float64(rs[r])
			gr, xr := gs[r*cols+lo:r*cols+hi], xs[r*cols+lo:r*cols+hi]
			for j := range acc {
				acc[j] += float64(gr[j]) * float64(xr[j]) * inv
			}
		}
		for j, a := range acc {
			dws[lo+j] += float32(a)
		}
	})
}

func (cpuBackend) Rotary(dst, x Storage, xl Layout, cos, sin Storage, transpose bool) {
	ds, xs, cs, ss := fs(dst), fs(x), fs(cos), fs(sin)
	a, h, t, d := xl.Shape[0], xl.Shape[1], xl.Shape[2], xl.Shape[3]
	half := d / 2
	rows := a * h * t
	parallelFor(rows, max(1, grain/max(d, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			ti, hi2, ai := r%t, (r/t)%h, r/(t*h)
			xr := xs[xl.Offset+ai*xl.Strides[0]+hi2*xl.Strides[1]+ti*xl.Strides[2]:]
			dr := ds[r*d : (r+1)*d]
			c, s := cs[ti*d:(ti+1)*d], ss[ti*d:(ti+1)*d]
			if !transpose {
				// as x·cos + cat(−x₂, x₁)·sin rounds
				kernels.RotaryRow(dr, xr[:d], c, s)
				continue
			}
			for i := range half { // the transposed rotation (the backward pass)
				x1, x2 := xr[i], xr[i+half]
				dr[i] = float32(x1*c[i]) + float32(x2*s[i+half])
				dr[i+half] = float32(x2*c[i+half]) - float32(x1*s[i])
			}
		}
	})
}

// SwiGLU and SwiGLUGrad take σ(gate) from the backend's Sigmoid (its
// vector kernels where the processor has them) into a scratch buffer, then
// combine in one pass: the same values as the composition, in two passes
// instead of three each way.
func (cb cpuBackend) SwiGLU(dst, gate, up Storage, n int) {
	sig := pooledF32(n, false)
	defer sig.Release()
	cb.Unary(OpSigmoid, UnaryParams{}, sig, gate, contiguousLayout([]int{n}))
	d, a, u, ss := fs(dst), fs(gate), fs(up), fs(sig)
	parallelFor(n, grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = a[i] * ss[i] * u[i]
		}
	})
}

func (cb cpuBackend) SwiGLUGrad(dgate, dup, g, gate, up Storage, n int) {
	sig := pooledF32(n, false)
	defer sig.Release()
	cb.Unary(OpSigmoid, UnaryParams{}, sig, gate, contiguousLayout([]int{n}))
	da, du, gs, a, u, ss := optF(dgate), optF(dup), fs(g), fs(gate), fs(up), fs(sig)
	parallelFor(n, grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x, s := a[i], ss[i]
			if da != nil {
				da[i] = gs[i] * u[i] * s * (1 + x*(1-s))
			}
			if du != nil {
				du[i] = gs[i] * (x * s)
			}
		}
	})
}

// gqaMats returns the layouts of the grouped products' B·Hkv groups of
// query rows [g·T, D] and of weights [g·T, S].
func gqaMats(b, h, hkv, t, s, d int) (ql, pl Layout) {
	g := h / hkv
	return contiguousLayout([]int{b * hkv, g * t, d}), contiguousLayout([]int{b * hkv, g * t, s})
}

// transposed is l [n, r, c] viewed as [n, c, r].
func transposed(l Layout) Layout {
	return Layout{Shape: []int{l.Shape[0], l.Shape[2], l.Shape[1]}, Strides: []int{l.Strides[0], l.Strides[2], l.Strides[1]}, Offset: l.Offset}
}

func (cb cpuBackend) GroupedAttention(y, p, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int) {
	if t > 1 {
		gqaCausal(fs(y), fs(p), fs(q), fs(k), kl, fs(v), vl, b, h, hkv, t, s, d, offset)
		return
	}
	ql, pl := gqaMats(b, h, hkv, t, s, d)
	cb.MatMul(p, q, ql, k, transposed(kl))
	ps := fs(p)
	scale := attentionScale(d)
	parallelFor(b*h*t, max(1, grain/max(s, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			// cpu_attention.go's row kernels: query r%t sees offset+r%t+1 keys
			softmaxCausalRow(ps[r*s:(r+1)*s], min(offset+r%t+1, s), scale)
		}
	})
	cb.MatMul(y, p, pl, v, vl)
}

// GroupedAttentionNoWeights is GroupedAttention keeping no weights: for
// T > 1 each task computes its head's weights into a buffer of its own;
// for T = 1 they go through a pooled temporary.
func (cb cpuBackend) GroupedAttentionNoWeights(y, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int) {
	if t > 1 {
		gqaCausal(fs(y), nil, fs(q), fs(k), kl, fs(v), vl, b, h, hkv, t, s, d, offset)
		return
	}
	p := pooledF32(b*h*t*s, false)
	defer p.Release()
	cb.GroupedAttention(y, p, q, k, kl, v, vl, b, h, hkv, t, s, d, offset)
}

// GroupedAttentionGradRecompute is GroupedAttentionGrad with the weights
// recomputed by GroupedAttention's own code: for T > 1 head by head in
// each task, for T = 1 into a pooled temporary.
func (cb cpuBackend) GroupedAttentionGradRecompute(dq, dk, dv, dy, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int) {
	if t > 1 {
		gqaCausalGrad(optF(dq), optF(dk), optF(dv), fs(dy), nil, fs(q), fs(k), kl, fs(v), vl, b, h, hkv, t, s, d, offset)
		return
	}
	p, y := pooledF32(b*h*t*s, false), pooledF32(b*h*t*d, false)
	defer p.Release()
	defer y.Release()
	cb.GroupedAttention(y, p, q, k, kl, v, vl, b, h, hkv, t, s, d, offset)
	cb.GroupedAttentionGrad(dq, dk, dv, dy, p, q, k, kl, v, vl, b, h, hkv, t, s, d, offset)
}

func (cb cpuBackend) GroupedAttentionGrad(dq, dk, dv, dy, p, q, k Storage, kl Layout, v Storage, vl Layout, b, h, hkv, t, s, d, offset int) {
	if t > 1 {
		gqaCausalGrad(optF(dq), optF(dk), optF(dv), fs(dy), fs(p), fs(q), fs(k), kl, fs(v), vl, b, h, hkv, t, s, d, offset)
		return
	}
	ql, pl := gqaMats(b, h, hkv, t, s, d)
	if dv != nil {
		cb.MatMul(dv, p, transposed(pl), dy, ql) // dV = Pᵀ·dY
	}
	if dq == nil && dk == nil {
		return
	}
	ds := pooledF32(b*h*t*s, false)
	defer ds.Release()
	cb.MatMul(ds, dy, ql, v, transposed(vl)) // dP = dY·Vᵀ
	dss, ps := fs(ds), fs(p)
	scale := attentionScale(d)
	parallelFor(b*h*t, max(1, grain/max(s, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			softmaxGradCausalRow(dss[r*s:(r+1)*s], ps[r*s:(r+1)*s], min(offset+r%t+1, s), scale)
		}
	})
	if dq != nil {
		cb.MatMul(dq, ds, pl, k, kl) // dQ = dS·K
	}
	if dk != nil {
		cb.MatMul(dk, ds, transposed(pl), q, ql) // dK = dSᵀ·Q
	}
}

// gqaCausal is GroupedAttention for T > 1 (training, prefill) as the
// packed attention computes it (cpu_attention.go): one task per (batch,
// query head) on the shared pool, single-threaded sgemm calls on the heads
// in place that skip what the mask hides. Query i of a head sees the
// offset cached keys and keys offset … offset+i; the T new keys are cut
// into causalBlocks, the columns [offset+j0, offset+j1) of S computed over
// the rows [j0, T) only, and the rows [i0, i1) of Y summed over the depth
// [0, offset+i1) only. With ps nil each task computes its weights into a
// buffer of its own and keeps none.
func gqaCausal(ys, ps, qs, ks []float32, kl Layout, vs []float32, vl Layout, b, h, hkv, t, s, d, offset int) {
	g := h / hkv
	parallel.For(b*h, 1, func(lo, hi int) {
		var own []float32
		if ps == nil {
			own = make([]float32, t*s)
		}
		for task := lo; task < hi; task++ {
			kv := task/h*hkv + task%h/g
			q, y := qs[task*t*d:], ys[task*t*d:]
			k, v := ks[kl.Offset+kv*kl.Strides[0]:], vs[vl.Offset+kv*vl.Strides[0]:]
			pr := own
			if ps != nil {
				pr = ps[task*t*s : (task+1)*t*s]
			}
			gqaCausalWeights(pr, q, k, kl, t, s, d, offset)
			for i0, i1 := range causalBlocks(t) {
				blas.SgemmRange(false, false, i1-i0, d, s, 0, offset+i1, pr[i0*s:], s, v, vl.Strides[1], y[i0*d:], d, 1)
			}
		}
	})
}

// gqaCausalWeights writes the weights pr [T, S] of one query head q
// [T, D] over its key head k (rows kl.Strides[1] apart), zero where
// masked: the scores in causalBlocks, then the row softmax. Every element
// of pr is written, whatever it held.
func gqaCausalWeights(pr, q, k []float32, kl Layout, t, s, d, offset int) {
	if offset > 0 {
		blas.Sgemm(false, true, t, offset, d, q, d, k, kl.Strides[1], pr, s, false, 1)
	}
	for j0, j1 := range causalBlocks(t) {
		blas.Sgemm(false, true, t-j0, j1-j0, d, q[j0*d:], d, k[(offset+j0)*kl.Strides[1]:], kl.Strides[1], pr[j0*s+offset+j0:], s, false, 1)
	}
	scale := attentionScale(d)
	for i := range t {
		softmaxCausalRow(pr[i*s:(i+1)*s], offset+i+1, scale)
	}
}

// gqaCausalGrad is GroupedAttentionGrad for T > 1, one task per (batch,
// key/value head) that goes through the heads of its group in turn (dK and
// dV add up over them): dP like S and dQ like Y in gqaCausal's blocks,
// dK and dV over the whole depth. With ps nil it recomputes each head's
// weights as gqaCausal computes them (the same bits) into a buffer of the
// task's own.
func gqaCausalGrad(dqs, dks, dvs, dys, ps, qs, ks []float32, kl Layout, vs []float32, vl Layout, b, h, hkv, t, s, d, offset int) {
	g := h / hkv
	scale := attentionScale(d)
	parallel.For(b*hkv, 1, func(lo, hi int) {
		var dp, own []float32
		if dqs != nil || dks != nil {
			dp = make([]float32, t*s)
		}
		if ps == nil {
			own = make([]float32, t*s)
		}
		for kv := lo; kv < hi; kv++ {
			k, v := ks[kl.Offset+kv*kl.Strides[0]:], vs[vl.Offset+kv*vl.Strides[0]:]
			for hh := range g {
				task := kv/hkv*h + kv%hkv*g + hh
				q, dy := qs[task*t*d:], dys[task*t*d:]
				pr := own
				if ps != nil {
					pr = ps[task*t*s : (task+1)*t*s]
				} else {
					gqaCausalWeights(pr, q, k, kl, t, s, d, offset)
				}
				if dvs != nil {
					blas.Sgemm(true, false, s, d, t, pr, s, dy, d, dvs[kv*s*d:], d, hh > 0, 1) // dV += Pᵀ·dY
				}
				if dp == nil {
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
				}
				if dqs != nil {
					for i0, i1 := range causalBlocks(t) {
						blas.SgemmRange(false, false, i1-i0, d, s, 0, offset+i1, dp[i0*s:], s, k, kl.Strides[1], dqs[task*t*d+i0*d:], d, 1)
					}
				}
				if dks != nil {
					blas.Sgemm(true, false, s, d, t, dp, s, q, d, dks[kv*s*d:], d, hh > 0, 1) // dK += dSᵀ·Q
				}
			}
		}
	})
}
