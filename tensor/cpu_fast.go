package tensor

import (
	"math"
	"slices"
	"sync"
	"unsafe"
)

// Fast float32 kernels of the CPU backend for the functions that dominate
// a transformer's elementwise time (GELU and its derivative, the
// exponentials of softmax). They evaluate polynomials in float32 instead of
// calling the float64 math package per element; the reference float64
// formulas (the ref and refGrad of the unary op table, unary_ops.go) stay
// as the specification, and cpu_fast_test.go checks these against them
// (≤ a few ulp for exp32, ~3e-7 relative for the normal CDF).

// exp32 returns e^x in float32 within about 1 ulp (Cephes' expf: x = n·ln2
// + r with |r| ≤ ln2/2, a degree-6 polynomial for e^r, then a scaling by
// 2^n through the exponent bits).
func exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88 || x < -87.33654475055310898:
		// overflow, subnormal results and 0: rare, take the slow path
		return float32(math.Exp(float64(x)))
	}
	// floor(x·log2e + 1/2) without a branch: the argument is in
	// (−126, 128), so shifting it positive makes truncation a floor
	n := int32(x*1.44269504088896341+256.5) - 256
	nf := float32(n)
	r := x - nf*0.693359375
	r -= nf * -2.12194440e-4
	z := r * r
	y := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	y = y*z + r + 1
	return y * math.Float32frombits(uint32(n+127)<<23)
}

// Coefficients of the normal CDF approximation, fitted (least squares on
// Chebyshev nodes, float64) by scripts in docs/perf-train.md:
//
//	erf(z)  = z·A(z²)                      for 0 ≤ z < 1
//	erfc(z) = e^(−z²)·t·B(t), t = 1/(1+z/2)  for z ≥ 1
//
// Both are within 3e-7 relative in float32 arithmetic.
const (
	erfA0 = 1.1283791500157305
	erfA1 = -0.37612414622493023
	erfA2 = 0.11280786917933772
	erfA3 = -0.02672690798257941
	erfA4 = 0.004934401010496971
	erfA5 = -0.0005696151575273373

	erfcB0 = 0.2821371477042166
	erfcB1 = 0.2813587808551952
	erfcB2 = 0.25197457553672176
	erfcB3 = 0.15875328333214694
	erfcB4 = 0.10797716798302345
	erfcB5 = 0.017746751079403003
	erfcB6 = -0.17772585229262386
	erfcB7 = 0.07818460946972333

	invSqrt2   = 0.7071067811865476
	invSqrt2Pi = 0.3989422804014327
)

// geluFlushX2 is the bound on x² (float32 0x4327b386) past which the GELU
// kernels take e^(−x²/2) as 0, so Φ(x) = φ(x) = 0 for x ≤ −12.949953 and
// Φ(x) = 1, φ(x) = 0 for x ≥ 12.949953: below, Φ(x) would be subnormal
// (−12.949952 is the last input whose Φ is normal on every kernel path),
// and each instruction meeting a subnormal costs a microcode assist on
// Intel CPUs (gelu_xmax of cpu_fast_amd64.s is the same bound).
const geluFlushX2 = 167.70126342773438

// normCDFPDF returns Φ(x), the standard normal CDF, and φ(x), its density,
// in float32 (relative error about 3e-7 in Φ and φ, also in the tails where
// Φ is small, down to x = −12.949952; both are 0 below, see geluFlushX2).
func normCDFPDF(x float32) (cdf, pdf float32) {
	// e^(−z²) with z = |x|/√2: x²/2 is exact in float64; the rounding of
	// its float32 value would cost up to x²·3e-8 of relative error in the
	// tails, so the remainder is applied as a first-order correction. The
	// correction is taken on e·2^64, whose product with the remainder
	// stays normal where e's would be subnormal (x beyond about ±12.2): the
	// same bits wherever e's product is normal (a scaling by a power of 2
	// commutes with rounding there), and no microcode assist elsewhere.
	var e float32
	if float32(x*x) <= geluFlushX2 || x != x {
		h64 := 0.5 * float64(x) * float64(x)
		h := float32(h64)
		es := exp32(-h) * 0x1p64
		es -= es * float32(h64-float64(h))
		e = es * 0x1p-64
	}
	pdf = e * invSqrt2Pi
	z := x * invSqrt2
	z = math.Float32frombits(math.Float32bits(z) &^ (1 << 31)) // |z|
	// The sign of x is applied with bit operations, so the only branch is
	// the (well predicted) choice of approximation.
	neg := uint32(int32(math.Float32bits(x)) >> 31) // all ones if x < 0
	if z < 1 {
		s := z * z
		r := 0.5 * z * (((((erfA5*s+erfA4)*s+erfA3)*s+erfA2)*s+erfA1)*s + erfA0)
		return 0.5 + math.Float32frombits(math.Float32bits(r)|neg&(1<<31)), pdf
	}
	t := 1 / (1 + 0.5*z)
	half := 0.5 * e * t * (((((((erfcB7*t+erfcB6)*t+erfcB5)*t+erfcB4)*t+erfcB3)*t+erfcB2)*t+erfcB1)*t + erfcB0)
	// Φ = half for x < 0 (kept exact in the tail), 1 − half otherwise
	return math.Float32frombits(math.Float32bits(half)&neg | math.Float32bits(1-half)&^neg), pdf
}

// geluF32 writes x·Φ(x) (exact GELU) of each element of src into dst: the
// GELU row's dense path (unary_ops.go), AVX-512 and AVX2 kernels, then Go.
func geluF32(dst, src []float32) { unaryOps[OpGELU].dense(dst, src, UnaryParams{}) }

// geluGradF32 writes g·(Φ(x) + x·φ(x)) into dst, as geluF32 does.
func geluGradF32(dst, g, x []float32) { unaryOps[OpGELU].denseGrad(dst, g, x, x, UnaryParams{}) }

// f32GELU is x·Φ(x) for one element.
func f32GELU(x float32) float32 {
	cdf, _ := normCDFPDF(x)
	return x * cdf
}

// GELU's tanh approximation 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³),
// is x·σ(2u) with σ the logistic function: one exp32 and a division, and no
// cancellation for negative x. These are 2u's coefficients.
const (
	geluTanhC1 = 1.5957691216057308   // 2·√(2/π)
	geluTanhC3 = 0.071354816272924168 // 2·√(2/π)·0.044715
)

// f32GELUTanh is 0.5·x·(1 + tanh(u)) for one element, within about
// |2u|·2e-7 relative of the float64 reference (the rounding of 2u). Past |2u| > 88 the
// logistic factor is 0 or 1 in float32, as tanh(u) is ±1 in the
// reference.
func f32GELUTanh(x float32) float32 {
	// float32 throughout: converting from float64 here made the loop
	// several times slower (measured), for no accuracy the tests need
	u2 := x * (geluTanhC1 + geluTanhC3*x*x)
	switch {
	case u2 > 88:
		return x
	case u2 < -88:
		return x * 0 // −0 for negative x, NaN for −Inf, like the reference
	}
	return x / (1 + exp32(-u2))
}

// f32GELUTanhGrad is g·d/dx[x·σ(2u)] = g·(σ + x·σ·(1−σ)·2u′), with
// 1−σ = e^(−2u)·σ to keep its precision for large x.
func f32GELUTanhGrad(g, x float32) float32 {
	if x-x != 0 { // ±Inf or NaN: NaN, like the reference
		return float32(math.NaN())
	}
	u2 := x * (geluTanhC1 + geluTanhC3*x*x)
	switch {
	case u2 > 88:
		return g
	case u2 < -88:
		return g * 0
	}
	e := exp32(-u2)
	s := 1 / (1 + e)
	du2 := geluTanhC1 + 3*geluTanhC3*x*x
	return g * (s + x*s*(e*s)*du2)
}

// geluTanhF32 writes GELU's tanh approximation of each element of src
// into dst.
func geluTanhF32(dst, src []float32) { unaryOps[OpGELUTanh].dense(dst, src, UnaryParams{}) }

// geluTanhGradF32 writes g·GELUTanh′(x) into dst.
func geluTanhGradF32(dst, g, x []float32) {
	unaryOps[OpGELUTanh].denseGrad(dst, g, x, x, UnaryParams{})
}

// expSub replaces x[i] by e^(x[i]−m) (exp32) and returns their sum.
func expSub(x []float32, m float32) float32 { return expSubTo(x, x, m) }

// expSubTo writes e^(x[i]−m) (exp32) into dst[i] and returns their sum.
func expSubTo(dst, x []float32, m float32) float32 {
	x = x[:len(dst)]
	var sum float32
	if n := len(dst) &^ 15; avx512Asm && n > 0 {
		sum = expSubToAVX512(&dst[0], &x[0], n, m)
		dst, x = dst[n:], x[n:]
	}
	if n := len(dst) &^ 7; geluAsm && n > 0 {
		sum += expSubToAVX2(&dst[0], &x[0], n, m)
		dst, x = dst[n:], x[n:]
	}
	for j, v := range x {
		e := exp32(v - m)
		dst[j] = e
		sum += e
	}
	return sum
}

// logSumExpFast returns log Σ e^x for a non-empty row, using scratch
// (len(x) elements) for the exponentials. It reports false, leaving the
// work to the float64 reference, when the row's maximum is not finite.
func logSumExpFast(x, scratch []float32) (float32, bool) {
	m := rowMax4(x)
	if m-m != 0 { // NaN or ±Inf
		return 0, false
	}
	return m + float32(math.Log(float64(expSubTo(scratch[:len(x)], x, m)))), true
}

// softmaxScaledFast writes scale·softmax(x) into dst for a non-empty row.
// It reports false, having written nothing useful, when the row's maximum
// is not finite.
func softmaxScaledFast(dst, x []float32, scale float32) bool {
	m := rowMax4(x)
	if m-m != 0 {
		return false
	}
	dst = dst[:len(x)]
	scaleF32(dst, scale/expSubTo(dst, x, m))
	return true
}

// adamwConsts are the float32 scalars of one AdamW step, in the order
// adamwAVX2 reads them.
type adamwConsts struct {
	b1, a1, b2, a2, bc2sqrt, eps, stepSize, decay float32
}

// adamwF32 is the update loop of cpuBackend.AdamW (see there) over
// equal-length slices.
func adamwF32(p, g, ms, vs []float32, c *adamwConsts) {
	n := len(p)
	g, ms, vs = g[:n], ms[:n], vs[:n]
	if n16 := n &^ 15; avx512Asm && n16 > 0 {
		adamwAVX512(&p[0], &g[0], &ms[0], &vs[0], n16, c)
		p, g, ms, vs = p[n16:], g[n16:], ms[n16:], vs[n16:]
	}
	if n8 := len(p) &^ 7; geluAsm && n8 > 0 {
		adamwAVX2(&p[0], &g[0], &ms[0], &vs[0], n8, c)
		p, g, ms, vs = p[n8:], g[n8:], ms[n8:], vs[n8:]
	}
	for i, gv := range g {
		mv := ms[i]*c.b1 + gv*c.a1
		vv := vs[i]*c.b2 + gv*gv*c.a2
		ms[i], vs[i] = mv, vv
		denom := float32(math.Sqrt(float64(vv)))/c.bc2sqrt + c.eps
		p[i] = p[i]*c.decay - c.stepSize*(mv/denom)
	}
}

// adamwFast selects adamwF32 in cpuBackend.AdamW; tests switch it off to
// compare with the reference loop.
var adamwFast = true

// layerNormGradFast is cpuBackend.LayerNormGrad in one parallel sweep over
// the rows (three passes over each row instead of five): the float64 mean,
// then x̂, ĝ = g·w and their row sums together with the per-chunk partial
// sums of dw and db, then dx. The partial sums are added in chunk order,
// so results do not depend on scheduling. dxs, dws, dbs and ws may be nil.
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
	asm := lnRowAsm(ws) // cpu_fast_layernorm.go
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		var xh, dh []float64
		if !asm {
			xh, dh = make([]float64, cols), make([]float64, cols)
		}
		var accW, accB []float64
		if wantW {
			accW, accB = make([]float64, cols), make([]float64, cols)
		}
		n := float64(cols)
		for r := lo; r < hi; r++ {
			gr, xr := gs[r*cols:(r+1)*cols], xs[r*cols:(r+1)*cols]
			if asm {
				mean, rsd := sumF64(xr)/n, float64(rs[r])
				s1, s2 := lnGradSums(gr, xr, ws, mean, rsd, accW, accB)
				if dxs != nil {
					lnGradDx(dxs[r*cols:(r+1)*cols], gr, xr, ws, mean, rsd, s1/n, s2/n)
				}
				continue
			}
			mean, rsd := sumF64(xr)/n, float64(rs[r])
			// loops without carried dependencies first; the two row
			// sums in two chains each (the additions' latency bounds a
			// single chain)
			for j, v := range xr {
				xh[j] = (float64(v) - mean) * rsd
			}
			if ws != nil {
				for j, v := range gr {
					dh[j] = float64(v) * float64(ws[j])
				}
			} else {
				for j, v := range gr {
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
			if wantW {
				for j, v := range gr {
					g := float64(v)
					accW[j] += g * xh[j]
					accB[j] += g
				}
			}
			if dxs != nil {
				s1 := (s1a + s1b) / n
				s2 := (s2a + s2b) / n
				dr := dxs[r*cols : (r+1)*cols]
				for j := range dr {
					dr[j] = float32(rsd * (dh[j] - s1 - xh[j]*s2))
				}
			}
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

// layerNormFast selects layerNormGradFast in cpuBackend.LayerNormGrad;
// tests switch it off to compare with the reference.
var layerNormFast = true

// sumF64 returns the sum of x accumulated in float64: the AVX-512 and AVX2
// kernels on whole blocks of 16 and 8 where they run, then four independent
// chains (a single chain is bound by the latency of the additions).
func sumF64(x []float32) float64 {
	var s float64
	if n := len(x) &^ 15; avx512Asm && n > 0 {
		s = sumF64AVX512(&x[0], n)
		x = x[n:]
	}
	if n := len(x) &^ 7; geluAsm && n > 0 {
		s += sumF64AVX2(&x[0], n)
		x = x[n:]
	}
	var a0, a1, a2, a3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		a0 += float64(v[0])
		a1 += float64(v[1])
		a2 += float64(v[2])
		a3 += float64(v[3])
	}
	for ; i < len(x); i++ {
		a0 += float64(x[i])
	}
	return s + ((a0 + a1) + (a2 + a3))
}

// layerNormFwdFast is cpuBackend.LayerNorm with the row sums in several
// float64 chains and the affine step without per-element branches (same
// float64 arithmetic, other summation order).
func layerNormFwdFast(d, ms, rs, xs, ws, bs []float32, rows, cols int, eps float32) {
	asm := lnRowAsm(ws) // cpu_fast_layernorm.go
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		var xc []float64
		if !asm {
			xc = make([]float64, cols)
		}
		n := float64(cols)
		for r := lo; r < hi; r++ {
			xr, dr := xs[r*cols:(r+1)*cols], d[r*cols:(r+1)*cols]
			if asm {
				mu := sumF64(xr) / n
				rstd := 1 / math.Sqrt(lnSqDev(xr, mu)/n+float64(eps))
				ms[r], rs[r] = float32(mu), float32(rstd)
				lnNorm(dr, xr, ws, bs, mu, rstd)
				continue
			}
			mu := sumF64(xr) / n
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
			rstd := 1 / math.Sqrt((qa+qb)/n+float64(eps))
			ms[r], rs[r] = float32(mu), float32(rstd)
			switch {
			case ws != nil && bs != nil:
				for j, c := range xc {
					dr[j] = float32(c*rstd)*ws[j] + bs[j]
				}
			case ws != nil:
				for j, c := range xc {
					dr[j] = float32(c*rstd) * ws[j]
				}
			case bs != nil:
				for j, c := range xc {
					dr[j] = float32(c*rstd) + bs[j]
				}
			default:
				for j, c := range xc {
					dr[j] = float32(c * rstd)
				}
			}
		}
	})
}

// softmaxFast selects softmaxRowFast and softmaxGradRowFast in
// cpuBackend.Softmax and SoftmaxGrad; tests switch it off to compare with
// the float64 reference.
var softmaxFast = true

// rowMax4 is rowMax in four independent chains (one chain is bound by the
// latency of max). It returns NaN if x holds one.
func rowMax4(x []float32) float32 {
	m0 := x[0]
	i := 0
	if n := len(x) &^ 15; avx512Asm && n > 0 {
		m0 = maxAVX512(&x[0], n)
		i = n
	} else if n := len(x) &^ 7; geluAsm && n > 0 {
		m0 = maxAVX2(&x[0], n)
		i = n
	}
	m1, m2, m3 := m0, m0, m0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		m0 = max(m0, v[0])
		m1 = max(m1, v[1])
		m2 = max(m2, v[2])
		m3 = max(m3, v[3])
	}
	for ; i < len(x); i++ {
		m0 = max(m0, x[i])
	}
	return max(max(m0, m1), max(m2, m3))
}

// softmaxRowFast writes softmax(x), or log-softmax(x) if log, of a
// non-empty row into y, with exp32 (the AVX2 kernel where there is one)
// and a float32 sum. It reports false, having written nothing useful, when
// the row's maximum is not finite (NaN, an all −Inf row, +Inf): the float64
// reference handles those.
func softmaxRowFast(y, x []float32, log bool) bool {
	m := rowMax4(x)
	if m-m != 0 {
		return false
	}
	y = y[:len(x)]
	sum := expSubTo(y, x, m)
	if log {
		logSoftmaxOut(y, x, m, float32(math.Log(float64(sum)))) // cpu_fast_softmax.go
		return true
	}
	scaleF32(y, 1/sum)
	return true
}

// scaleF32 multiplies x by k in place.
func scaleF32(x []float32, k float32) {
	if n := len(x) &^ 15; avx512Asm && n > 0 {
		scaleAVX512(&x[0], n, k)
		x = x[n:]
	}
	if n := len(x) &^ 7; geluAsm && n > 0 {
		scaleAVX2(&x[0], n, k)
		x = x[n:]
	}
	for j := range x {
		x[j] *= k
	}
}

// arithFast selects arithF32 in cpuBackend.Binary; tests switch it off to
// compare with the Go loops.
var arithFast = true

// arithSlow writes d[i] = a[i] op b[i] with the plain-store kernels where
// there are enough elements, else in Go.
func arithSlow(op BinaryOp, d, a, b []float32) {
	if !arithF32(op, d, a, b, false) {
		arithGo(op, d, a, b)
	}
}

// arithF32 writes d[i] = a[i] op b[i] for the four arithmetic ops with the
// AVX-512 and AVX2 kernels (same IEEE results as the Go loop), the tail in
// Go. It reports false, doing nothing, where there is no assembly.
//
// stream asks for non-temporal stores, which the caller chooses for an
// output of at least streamMinElems (of which d may be one worker's part):
// such an output does not stay in the core's caches anyway, and plain
// stores would first read every line of it from memory (the fresh buffer
// of an allocating op is rarely cached). The elements before the first
// vector-aligned one, and the tail, are written with plain stores.
func arithF32(op BinaryOp, d, a, b []float32, stream bool) bool {
	n := len(d) &^ 7
	if !geluAsm || n == 0 {
		return false
	}
	switch op {
	case OpAdd, OpSub, OpMul, OpDiv:
	default:
		return false
	}
	a, b = a[:len(d)], b[:len(d)]
	if stream {
		width := 32
		if avx512Asm {
			width = 64
		}
		// elements before the first aligned one (d is 4-byte aligned)
		h := (width - int(uintptr(unsafe.Pointer(&d[0])))%width) % width / 4
		m := (len(d) - h) &^ (width/4 - 1)
		if m > 0 {
			arithSlow(op, d[:h], a[:h], b[:h])
			dm, am, bm := &d[h], &a[h], &b[h]
			switch {
			case avx512Asm && op == OpAdd:
				addNTAVX512(dm, am, bm, m)
			case avx512Asm && op == OpSub:
				subNTAVX512(dm, am, bm, m)
			case avx512Asm && op == OpMul:
				mulNTAVX512(dm, am, bm, m)
			case avx512Asm:
				divNTAVX512(dm, am, bm, m)
			case op == OpAdd:
				addNTAVX2(dm, am, bm, m)
			case op == OpSub:
				subNTAVX2(dm, am, bm, m)
			case op == OpMul:
				mulNTAVX2(dm, am, bm, m)
			default:
				divNTAVX2(dm, am, bm, m)
			}
			arithSlow(op, d[h+m:], a[h+m:], b[h+m:])
			return true
		}
	}
	n16 := 0
	if avx512Asm {
		n16 = len(d) &^ 15
	}
	if n16 > 0 {
		switch op {
		case OpAdd:
			addAVX512(&d[0], &a[0], &b[0], n16)
		case OpSub:
			subAVX512(&d[0], &a[0], &b[0], n16)
		case OpMul:
			mulAVX512(&d[0], &a[0], &b[0], n16)
		case OpDiv:
			divAVX512(&d[0], &a[0], &b[0], n16)
		}
	}
	if n > n16 {
		d8, a8, b8 := d[n16:], a[n16:], b[n16:]
		switch op {
		case OpAdd:
			addAVX2(&d8[0], &a8[0], &b8[0], n-n16)
		case OpSub:
			subAVX2(&d8[0], &a8[0], &b8[0], n-n16)
		case OpMul:
			mulAVX2(&d8[0], &a8[0], &b8[0], n-n16)
		case OpDiv:
			divAVX2(&d8[0], &a8[0], &b8[0], n-n16)
		}
	}
	for k := n; k < len(d); k++ {
		switch op {
		case OpAdd:
			d[k] = a[k] + b[k]
		case OpSub:
			d[k] = a[k] - b[k]
		case OpMul:
			d[k] = a[k] * b[k]
		case OpDiv:
			d[k] = a[k] / b[k]
		}
	}
	return true
}

// dotF64 returns Σ a[i]·b[i] accumulated in float64: the AVX-512 and AVX2
// kernels on whole blocks of 16 and 8 where they run, then four chains.
func dotF64(a, b []float32) float64 {
	b = b[:len(a)]
	var s float64
	if n := len(a) &^ 15; avx512Asm && n > 0 {
		s = dotF64AVX512(&a[0], &b[0], n)
		a, b = a[n:], b[n:]
	}
	if n := len(a) &^ 7; geluAsm && n > 0 {
		s += dotF64AVX2(&a[0], &b[0], n)
		a, b = a[n:], b[n:]
	}
	var a0, a1, a2, a3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		u, v := a[i:i+4:i+4], b[i:i+4:i+4]
		a0 += float64(u[0]) * float64(v[0])
		a1 += float64(u[1]) * float64(v[1])
		a2 += float64(u[2]) * float64(v[2])
		a3 += float64(u[3]) * float64(v[3])
	}
	for ; i < len(a); i++ {
		a0 += float64(a[i]) * float64(b[i])
	}
	return s + ((a0 + a1) + (a2 + a3))
}

// softmaxGradRowFast is one row of cpuBackend.SoftmaxGrad: the sums in
// float64 chains, and for log-softmax e^y with exp32 instead of math.Exp.
func softmaxGradRowFast(d, g, y []float32, log bool) {
	g, y = g[:len(d)], y[:len(d)]
	if log {
		expSubTo(d, y, 0)
		logSoftmaxGradOut(d, g, float32(sumF64(g))) // cpu_fast_softmax.go
		return
	}
	softmaxGradOut(d, y, g, float32(dotF64(g, y)))
}
