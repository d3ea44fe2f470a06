package tensor

// LayerNorm's row kernels: the float64 sums (the row sum is sumF64's) and
// the elementwise sweeps of layerNormFwdFast and layerNormGradFast, with the AVX-512 kernels of
// cpu_fast_amd64.s on whole blocks of 16 elements, the AVX2 ones on a block
// of 8 after them and Go on the rest (the pattern of geluF32 and expSubTo).
// The arithmetic is float64 on float32 data, like the Go code's: each sum
// is exact per element and rounds only in its float64 additions (in a few
// independent chains, with the products fused into them), and the variance
// is a second pass over the deviations from the mean, never E[x²] − µ².

// lnRowAsm reports whether the LayerNorm rows take the kernels below: where
// the AVX2 (and possibly AVX-512) assembly runs, for an affine LayerNorm
// (w != nil; the kernels always scale by w). The other cases stay in the
// loops of layerNormFwdFast and layerNormGradFast.
func lnRowAsm(w []float32) bool { return geluAsm && w != nil }

// lnSqDev returns Σ (x[i] − mu)² in float64.
func lnSqDev(x []float32, mu float64) float64 {
	var s float64
	if n := len(x) &^ 15; avx512Asm && n > 0 {
		s = lnSqDevAVX512(&x[0], n, mu)
		x = x[n:]
	}
	if n := len(x) &^ 7; geluAsm && n > 0 {
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
	if n := len(dst) &^ 15; avx512Asm && n > 0 {
		lnNormAVX512(&dst[0], &x[0], &w[0], bp(), n, mu, r)
		step(n)
	}
	if n := len(dst) &^ 7; geluAsm && n > 0 {
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
	if n := len(x) &^ 15; avx512Asm && n > 0 {
		aw, ab := acc()
		a, b := lnGradSumsAVX512(&g[0], &x[0], &w[0], n, mu, r, aw, ab)
		s1, s2 = s1+a, s2+b
		step(n)
	}
	if n := len(x) &^ 7; geluAsm && n > 0 {
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
	if n := len(dx) &^ 15; avx512Asm && n > 0 {
		lnGradDxAVX512(&dx[0], &g[0], &x[0], &w[0], n, mu, r, s1, s2)
		dx, g, x, w = dx[n:], g[n:], x[n:], w[n:]
	}
	if n := len(dx) &^ 7; geluAsm && n > 0 {
		lnGradDxAVX2(&dx[0], &g[0], &x[0], &w[0], n, mu, r, s1, s2)
		dx, g, x, w = dx[n:], g[n:], x[n:], w[n:]
	}
	for j, v := range x {
		xh := (float64(v) - mu) * r
		dx[j] = float32(r * (float64(g[j])*float64(w[j]) - s1 - xh*s2))
	}
}
