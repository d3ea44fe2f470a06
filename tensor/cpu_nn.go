package tensor

import (
	"math"
	"slices"
	"sync"

	"github.com/chewxy/math32"

	"github.com/wickml/wick/internal/kernels"
)

func (cpuBackend) Softmax(dst, src Storage, rows, cols int, log bool) {
	d, s := fs(dst), fs(src)
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			x, y := s[r*cols:(r+1)*cols], d[r*cols:(r+1)*cols]
			if softmaxFast && cols > 0 && kernels.SoftmaxRow(y, x, log) {
				continue
			}
			m := math32.Inf(-1)
			for _, v := range x {
				m = max(m, v)
			}
			if math32.IsInf(m, -1) {
				m = 0
			}
			var sum float64
			for j, v := range x {
				e := math.Exp(float64(v - m))
				sum += e
				if !log {
					y[j] = float32(e)
				}
			}
			if log {
				ls := float32(math.Log(sum))
				for j, v := range x {
					y[j] = v - m - ls
				}
			} else {
				inv := 1 / sum
				for j := range y {
					y[j] = float32(float64(y[j]) * inv)
				}
			}
		}
	})
}

func (cpuBackend) SoftmaxGrad(dst, g, y Storage, rows, cols int, log bool) {
	d, gs, ys := fs(dst), fs(g), fs(y)
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			gr, yr, dr := gs[r*cols:(r+1)*cols], ys[r*cols:(r+1)*cols], d[r*cols:(r+1)*cols]
			if softmaxFast {
				kernels.SoftmaxGrad(dr, gr, yr, log)
				continue
			}
			var acc float64
			if log {
				for _, v := range gr {
					acc += float64(v)
				}
				for j := range dr {
					dr[j] = gr[j] - float32(math.Exp(float64(yr[j])))*float32(acc)
				}
				continue
			}
			for j := range gr {
				acc += float64(gr[j]) * float64(yr[j])
			}
			a := float32(acc)
			for j := range dr {
				dr[j] = yr[j] * (gr[j] - a)
			}
		}
	})
}

func optF(s Storage) []float32 {
	if s == nil {
		return nil
	}
	return fs(s)
}

func (cpuBackend) LayerNorm(dst, mean, rstd, x, w, b Storage, rows, cols int, eps float32) {
	d, ms, rs, xs, ws, bs := fs(dst), fs(mean), fs(rstd), fs(x), optF(w), optF(b)
	if layerNormFast && cols > 0 {
		layerNormFwdFast(d, ms, rs, xs, ws, bs, rows, cols, eps)
		return
	}
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, dr := xs[r*cols:(r+1)*cols], d[r*cols:(r+1)*cols]
			var sum float64
			for _, v := range xr {
				sum += float64(v)
			}
			mu := sum / float64(cols)
			var sq float64
			for _, v := range xr {
				dv := float64(v) - mu
				sq += dv * dv
			}
			rstdv := 1 / math.Sqrt(sq/float64(cols)+float64(eps))
			ms[r], rs[r] = float32(mu), float32(rstdv)
			for j, v := range xr {
				y := float32((float64(v) - mu) * rstdv)
				if ws != nil {
					y *= ws[j]
				}
				if bs != nil {
					y += bs[j]
				}
				dr[j] = y
			}
		}
	})
}

func (cpuBackend) LayerNormGrad(dx, dw, db, g, x, mean, rstd, w Storage, rows, cols int) {
	gs, xs, rs, ws := fs(g), fs(x), fs(rstd), optF(w)
	if layerNormFast && rows > 0 && cols > 0 { // one sweep
		layerNormGradFast(optF(dx), optF(dw), optF(db), gs, xs, rs, ws, rows, cols)
		return
	}
	// The saved mean is float32: when |mean| ≫ std its rounding error
	// dominates x − mean, so recompute the means in float64 (one pass over x).
	ms := make([]float64, rows)
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			var sum float64
			for _, v := range xs[r*cols : (r+1)*cols] {
				sum += float64(v)
			}
			ms[r] = sum / float64(max(cols, 1))
		}
	})
	if dx != nil {
		dxs := fs(dx)
		parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				gr, xr, dr := gs[r*cols:(r+1)*cols], xs[r*cols:(r+1)*cols], dxs[r*cols:(r+1)*cols]
				mu, rsd := ms[r], float64(rs[r])
				// dxhat = g·w; dx = rstd·(dxhat − mean(dxhat) − xhat·mean(dxhat·xhat))
				var s1, s2 float64
				for j := range gr {
					dh := float64(gr[j])
					if ws != nil {
						dh *= float64(ws[j])
					}
					xh := (float64(xr[j]) - mu) * rsd
					s1 += dh
					s2 += dh * xh
				}
				s1 /= float64(cols)
				s2 /= float64(cols)
				for j := range gr {
					dh := float64(gr[j])
					if ws != nil {
						dh *= float64(ws[j])
					}
					xh := (float64(xr[j]) - mu) * rsd
					dr[j] = float32(rsd * (dh - s1 - xh*s2))
				}
			}
		})
	}
	if dw == nil && db == nil {
		return
	}
	dws, dbs := optF(dw), optF(db)
	parallelFor(cols, 64, func(lo, hi int) {
		accW := make([]float64, hi-lo)
		accB := make([]float64, hi-lo)
		for r := range rows {
			mu, rsd := ms[r], float64(rs[r])
			gr, xr := gs[r*cols+lo:r*cols+hi], xs[r*cols+lo:r*cols+hi]
			for j := range gr {
				accW[j] += float64(gr[j]) * (float64(xr[j]) - mu) * rsd
				accB[j] += float64(gr[j])
			}
		}
		for j := range accW {
			if dws != nil {
				dws[lo+j] += float32(accW[j])
			}
			if dbs != nil {
				dbs[lo+j] += float32(accB[j])
			}
		}
	})
}

func (cpuBackend) Gather(dst, src, idx Storage, n, rowLen int) {
	if dc := dst.(*cpuStorage).live(); is16(dc.dt) {
		// a bfloat16 or float16 table: rows of bit patterns
		d, s, ix := dc.h, src.(*cpuStorage).live().h, is(idx)
		parallelFor(n, max(1, grain/max(rowLen, 1)), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				r := int(ix[i])
				copy(d[i*rowLen:(i+1)*rowLen], s[r*rowLen:(r+1)*rowLen])
			}
		})
		return
	}
	d, s, ix := fs(dst), fs(src), is(idx)
	parallelFor(n, max(1, grain/max(rowLen, 1)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := int(ix[i])
			copy(d[i*rowLen:(i+1)*rowLen], s[r*rowLen:(r+1)*rowLen])
		}
	})
}

func (cpuBackend) ScatterAdd(dst, idx, src Storage, n, rowLen int) {
	d, s, ix := fs(dst), fs(src), is(idx)
	// split over columns so that rows with equal indices never race
	parallelFor(rowLen, 64, func(lo, hi int) {
		for i := range n {
			r := int(ix[i])
			dr, sr := d[r*rowLen+lo:r*rowLen+hi], s[i*rowLen+lo:i*rowLen+hi]
			for j, v := range sr {
				dr[j] += v
			}
		}
	})
}

func (cpuBackend) CrossEntropy(loss, logits, targets Storage, rows, cols int, ignore int64) {
	l, x, t := fs(loss), fs(logits), is(targets)
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		scratch := make([]float32, cols)
		for r := lo; r < hi; r++ {
			if t[r] == ignore {
				l[r] = 0
				continue
			}
			if lse, ok := kernels.LogSumExp(x[r*cols:(r+1)*cols], scratch); ok {
				l[r] = lse - x[r*cols+int(t[r])]
				continue
			}
			lse := reduceLine(ReduceLogSumExp, x, r*cols, 1, cols)
			l[r] = lse - x[r*cols+int(t[r])]
		}
	})
}

func (cpuBackend) CrossEntropyGrad(dst, logits, targets Storage, rows, cols int, ignore int64, scale float32) {
	d, x, t := fs(dst), fs(logits), is(targets)
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			dr := d[r*cols : (r+1)*cols]
			if t[r] == ignore {
				clear(dr)
				continue
			}
			xr := x[r*cols : (r+1)*cols]
			if kernels.SoftmaxScaledTo(dr, xr, scale) {
				dr[t[r]] -= scale
				continue
			}
			lse := float64(reduceLine(ReduceLogSumExp, x, r*cols, 1, cols))
			for j, v := range xr {
				dr[j] = float32(math.Exp(float64(v)-lse)) * scale
			}
			dr[t[r]] -= scale
		}
	})
}

func (cpuBackend) AdamW(param, grad, m, v Storage, n int, c AdamWStep) {
	p, g, ms, vs := fs(param), fs(grad), fs(m), fs(v)
	// Scalars are formed in float64 and rounded where PyTorch rounds its
	// Python floats, so that updates agree to the last bit.
	bc1 := 1 - math.Pow(c.Beta1, float64(c.Step))
	bc2 := 1 - math.Pow(c.Beta2, float64(c.Step))
	stepSize := float32(c.LR / bc1)
	bc2sqrt := float32(math.Sqrt(bc2))
	decay := float32(1 - c.LR*c.WeightDecay)
	b1, b2 := float32(c.Beta1), float32(c.Beta2)
	a1, a2 := float32(1-c.Beta1), float32(1-c.Beta2)
	eps := float32(c.Eps)
	if adamwFast { // kernels.AdamW: the same operations, 8 lanes at a time
		k := &kernels.AdamWConsts{B1: b1, A1: a1, B2: b2, A2: a2, BC2Sqrt: bc2sqrt, Eps: eps, StepSize: stepSize, Decay: decay}
		parallelFor(n, grain, func(lo, hi int) { kernels.AdamW(p[lo:hi], g[lo:hi], ms[lo:hi], vs[lo:hi], k) })
		return
	}
	parallelFor(n, grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			gv := g[i]
			mv := ms[i]*b1 + gv*a1
			vv := vs[i]*b2 + gv*gv*a2
			ms[i], vs[i] = mv, vv
			denom := float32(math.Sqrt(float64(vv)))/bc2sqrt + eps
			p[i] = p[i]*decay - stepSize*(mv/denom)
		}
	})
}

// GlobalNorm writes √(Σ x²) over the first ns[i] elements of each srcs[i]
// into dst[0], summing the squares in float64 (Normer).
func (cpuBackend) GlobalNorm(dst Storage, srcs []Storage, ns []int) {
	var acc float64
	for i, s := range srcs {
		x := fs(s)[:ns[i]]
		acc += kernels.DotF64(x, x)
	}
	fs(dst)[0] = float32(math.Sqrt(acc))
}

// softmaxFast selects kernels.SoftmaxRow and kernels.SoftmaxGrad in
// cpuBackend.Softmax and SoftmaxGrad; tests switch it off to compare with
// the float64 reference.
var softmaxFast = true

// adamwFast selects kernels.AdamW in cpuBackend.AdamW; tests switch it
// off to compare with the reference loop.
var adamwFast = true

// layerNormFast selects layerNormFwdFast and layerNormGradFast in
// cpuBackend.LayerNorm and LayerNormGrad; tests switch it off to compare
// with the reference.
var layerNormFast = true

// layerNormFwdFast is cpuBackend.LayerNorm with the rows in
// kernels.LayerNormRow: the row sums in several float64 chains and the
// affine step without per-element branches (same float64 arithmetic, other
// summation order).
func layerNormFwdFast(d, ms, rs, xs, ws, bs []float32, rows, cols int, eps float32) {
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		var s kernels.LNScratch
		for r := lo; r < hi; r++ {
			ms[r], rs[r] = kernels.LayerNormRow(d[r*cols:(r+1)*cols], xs[r*cols:(r+1)*cols], ws, bs, eps, &s)
		}
	})
}

// layerNormGradFast is cpuBackend.LayerNormGrad in one parallel sweep over
// the rows (three passes over each row instead of five, kernels.LayerNormGradRow):
// the float64 mean, then x̂, ĝ = g·w and their row sums together with the
// per-chunk partial sums of dw and db, then dx. The partial sums are added
// in chunk order, so results do not depend on scheduling. dxs, dws, dbs
// and ws may be nil.
func layerNormGradFast(dxs, dws, dbs, gs, xs, rs, ws []float32, rows, cols int) {
	wantW := dws != nil || dbs != nil
	type partial struct {
		lo         int
		accW, accB []float64
	}
	var (
		mu       sync.Mutex
		partials []partial
	)
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		var s kernels.LNScratch
		var accW, accB []float64
		if wantW {
			accW, accB = make([]float64, cols), make([]float64, cols)
		}
		for r := lo; r < hi; r++ {
			var dx []float32
			if dxs != nil {
				dx = dxs[r*cols : (r+1)*cols]
			}
			kernels.LayerNormGradRow(dx, gs[r*cols:(r+1)*cols], xs[r*cols:(r+1)*cols], ws, rs[r], accW, accB, &s)
		}
		if wantW {
			mu.Lock()
			partials = append(partials, partial{lo, accW, accB})
			mu.Unlock()
		}
	})
	if !wantW {
		return
	}
	slices.SortFunc(partials, func(a, b partial) int { return a.lo - b.lo })
	for j := range cols {
		var w, b float64
		for _, p := range partials {
			w += p.accW[j]
			b += p.accB[j]
		}
		if dws != nil {
			dws[j] += float32(w)
		}
		if dbs != nil {
			dbs[j] += float32(b)
		}
	}
}
