package kernels

import "math"

// LayerNorm's row kernels: the float64 sums (the row sum is SumF64's) and
// the elementwise sweeps of LayerNormRow and LayerNormGradRow, with the AVX-512 kernels of
// kernels_amd64.s on whole blocks of 16 elements, the AVX2 ones on a block
// of 8 after them and Go on the rest (the pattern of ExpSubTo).
// The arithmetic is float64 on float32 data, like the Go code's: each sum
// is exact per element and rounds only in its float64 additions (in a few
// independent chains, with the products fused into them), and the variance
// is a second pass over the deviations from the mean, never E[x²] − µ².

// lnRowVec reports whether the LayerNorm rows take the kernels below: where
// the AVX2 (and possibly AVX-512) assembly runs, for an affine LayerNorm
// (w != nil; the kernels always scale by w). The other cases stay in the
// Go loops of LayerNormRow and LayerNormGradRow.
func lnRowVec(w []float32) bool { return avx2 && w != nil }

// lnSqDev returns Σ (x[i] − mu)² in float64.
func lnSqDev(x []float32, mu float64) float64 {
	var s float64
	if n := len(x) &^ 15; avx512 && n > 0 {
		s = lnSqDevAVX512(&x[0], n, mu)
		x = x[n:]
	}
	if n := len(x) &^ 7; avx2 && n > 0 {
		s += lnSqDevAVX2(&x[0], n, mu)
		x = x[n:]
	}
	for _, v := range x {
		d := float64(v) - mu
		s += d * d
	}
	return s
}

// lnNorm writes float32((x[i] − mu)·r)·w[i] + b[i] into dst (without the
// bias if b is nil), layerNormFwdFast's float32 operations.
func lnNorm(dst, x, w, b []float32, mu, r float64) {
	x, w = x[:len(dst)], w[:len(dst)]
	if b != nil {
		b = b[:len(dst)]
	}
	bp := func() *float32 {
		if b == nil {
			return nil
		}
		return &b[0]
	}
	step := func(n int) {
		dst, x, w = dst[n:], x[n:], w[n:]
		if b != nil {
			b = b[n:]
		}
	}
	if n := len(dst) &^ 15; avx512 && n > 0 {
		lnNormAVX512(&dst[0], &x[0], &w[0], bp(), n, mu, r)
		step(n)
	}
	if n := len(dst) &^ 7; avx2 && n > 0 {
		lnNormAVX2(&dst[0], &x[0], &w[0], bp(), n, mu, r)
		step(n)
	}
	for j, v := range x {
		y := float32((float64(v)-mu)*r) * w[j]
		if b != nil {
			y += b[j]
		}
		dst[j] = y
	}
}

// lnGradSums returns s1 = Σ ĝ and s2 = Σ ĝ·x̂ over a row, with x̂ = (x − mu)·r
// and ĝ = g·w in float64, and adds g·x̂ into accW and g into accB (both nil
// or both of the row's length).
func lnGradSums(g, x, w []float32, mu, r float64, accW, accB []float64) (s1, s2 float64) {
	g, w = g[:len(x)], w[:len(x)]
	if accW != nil {
		accW, accB = accW[:len(x)], accB[:len(x)]
	}
	acc := func() (*float64, *float64) {
		if accW == nil {
			return nil, nil
		}
		return &accW[0], &accB[0]
	}
	step := func(n int) {
		g, x, w = g[n:], x[n:], w[n:]
		if accW != nil {
			accW, accB = accW[n:], accB[n:]
		}
	}
	if n := len(x) &^ 15; avx512 && n > 0 {
		aw, ab := acc()
		a, b := lnGradSumsAVX512(&g[0], &x[0], &w[0], n, mu, r, aw, ab)
		s1, s2 = s1+a, s2+b
		step(n)
	}
	if n := len(x) &^ 7; avx2 && n > 0 {
		aw, ab := acc()
		a, b := lnGradSumsAVX2(&g[0], &x[0], &w[0], n, mu, r, aw, ab)
		s1, s2 = s1+a, s2+b
		step(n)
	}
	for j, v := range x {
		xh := (float64(v) - mu) * r
		gv := float64(g[j])
		dh := gv * float64(w[j])
		s1 += dh
		s2 += dh * xh
		if accW != nil {
			accW[j] += gv * xh
			accB[j] += gv
		}
	}
	return s1, s2
}

// lnGradDx writes float32(r·(ĝ − s1 − x̂·s2)) into dx, with x̂ and ĝ as in
// lnGradSums.
func lnGradDx(dx, g, x, w []float32, mu, r, s1, s2 float64) {
	g, x, w = g[:len(dx)], x[:len(dx)], w[:len(dx)]
	if n := len(dx) &^ 15; avx512 && n > 0 {
		lnGradDxAVX512(&dx[0], &g[0], &x[0], &w[0], n, mu, r, s1, s2)
		dx, g, x, w = dx[n:], g[n:], x[n:], w[n:]
	}
	if n := len(dx) &^ 7; avx2 && n > 0 {
		lnGradDxAVX2(&dx[0], &g[0], &x[0], &w[0], n, mu, r, s1, s2)
		dx, g, x, w = dx[n:], g[n:], x[n:], w[n:]
	}
	for j, v := range x {
		xh := (float64(v) - mu) * r
		dx[j] = float32(r * (float64(g[j])*float64(w[j]) - s1 - xh*s2))
	}
}

// LNScratch is the scratch space of the Go loops of LayerNormRow and
// LayerNormGradRow, allocated on first use (the vector kernels need none):
// one per goroutine, the zero value ready to use.
type LNScratch struct{ a, b []float64 }

func (s *LNScratch) get(n int) (a, b []float64) {
	if len(s.a) < n {
		s.a, s.b = make([]float64, n), make([]float64, n)
	}
	return s.a[:n], s.b[:n]
}

// LayerNormRow normalises one row: dr = (xr − µ)·rstd·w + b (w and b may
// be nil), with the mean µ and rstd = 1/√(var + eps) (the biased variance)
// in float64, returned rounded to float32. The sums run in several float64
// chains (the vector kernels where they run, for an affine row), the
// affine step without per-element branches.
func LayerNormRow(dr, xr, w, b []float32, eps float32, s *LNScratch) (mean, rstd float32) {
	cols := len(xr)
	n := float64(cols)
	if lnRowVec(w) {
		mu := SumF64(xr) / n
		r := 1 / math.Sqrt(lnSqDev(xr, mu)/n+float64(eps))
		lnNorm(dr, xr, w, b, mu, r)
		return float32(mu), float32(r)
	}
	xc, _ := s.get(cols)
	mu := SumF64(xr) / n
	for j, v := range xr {
		xc[j] = float64(v) - mu
	}
	var qa, qb float64
	j := 0
	for ; j+2 <= cols; j += 2 {
		qa += xc[j] * xc[j]
		qb += xc[j+1] * xc[j+1]
	}
	if j < cols {
		qa += xc[j] * xc[j]
	}
	r := 1 / math.Sqrt((qa+qb)/n+float64(eps))
	dr = dr[:cols]
	switch {
	case w != nil && b != nil:
		for j, c := range xc {
			dr[j] = float32(c*r)*w[j] + b[j]
		}
	case w != nil:
		for j, c := range xc {
			dr[j] = float32(c*r) * w[j]
		}
	case b != nil:
		for j, c := range xc {
			dr[j] = float32(c*r) + b[j]
		}
	default:
		for j, c := range xc {
			dr[j] = float32(c * r)
		}
	}
	return float32(mu), float32(r)
}

// LayerNormGradRow is one row of LayerNorm's derivative, given the row's
// saved rstd: dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)), x̂ = (x − µ)·rstd,
// ĝ = g·w (w may be nil), with µ recomputed in float64; it adds g·x̂ into
// accW and g into accB (both nil, or both of the row's length). dx may be
// nil.
func LayerNormGradRow(dx, g, x, w []float32, rstd float32, accW, accB []float64, s *LNScratch) {
	cols := len(x)
	n := float64(cols)
	mean, rsd := SumF64(x)/n, float64(rstd)
	if lnRowVec(w) {
		s1, s2 := lnGradSums(g, x, w, mean, rsd, accW, accB)
		if dx != nil {
			lnGradDx(dx, g, x, w, mean, rsd, s1/n, s2/n)
		}
		return
	}
	xh, dh := s.get(cols)
	g = g[:cols]
	// loops without carried dependencies first; the two row sums in two
	// chains each (the additions' latency bounds a single chain)
	for j, v := range x {
		xh[j] = (float64(v) - mean) * rsd
	}
	if w != nil {
		for j, v := range g {
			dh[j] = float64(v) * float64(w[j])
		}
	} else {
		for j, v := range g {
			dh[j] = float64(v)
		}
	}
	var s1a, s1b, s2a, s2b float64
	j := 0
	for ; j+2 <= cols; j += 2 {
		s1a += dh[j]
		s1b += dh[j+1]
		s2a += dh[j] * xh[j]
		s2b += dh[j+1] * xh[j+1]
	}
	if j < cols {
		s1a += dh[j]
		s2a += dh[j] * xh[j]
	}
	if accW != nil {
		for j, v := range g {
			gv := float64(v)
			accW[j] += gv * xh[j]
			accB[j] += gv
		}
	}
	if dx != nil {
		s1 := (s1a + s1b) / n
		s2 := (s2a + s2b) / n
		dx = dx[:cols]
		for j := range dx {
			dx[j] = float32(rsd * (dh[j] - s1 - xh[j]*s2))
		}
	}
}
