package kernels

import "math"

// Scalar float32 versions of the functions that dominate a transformer's
// elementwise time (GELU and its derivative, the exponentials of softmax),
// which the Go twins and the tails of the slice kernels use. They evaluate
// polynomials in float32 instead of calling the float64 math package per
// element; the reference float64 formulas (the ref and refGrad of tensor's
// unary op table, tensor/unary_ops.go) stay as the specification, and
// tensor's tests check these against them (≤ a few ulp for Exp32, ~3e-7
// relative for the normal CDF).

// Exp32 returns e^x in float32 within about 1 ulp (Cephes' expf: x = n·ln2
// + r with |r| ≤ ln2/2, a degree-6 polynomial for e^r, then a scaling by
// 2^n through the exponent bits).
func Exp32(x float32) float32 {
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

// GELUFlushX2 is the bound on x² (float32 0x4327b386) past which the GELU
// kernels take e^(−x²/2) as 0, so Φ(x) = φ(x) = 0 for x ≤ −12.949953 and
// Φ(x) = 1, φ(x) = 0 for x ≥ 12.949953: below, Φ(x) would be subnormal
// (−12.949952 is the last input whose Φ is normal on every kernel path),
// and each instruction meeting a subnormal costs a microcode assist on
// Intel CPUs (gelu_xmax of kernels_amd64.s is the same bound).
const GELUFlushX2 = 167.70126342773438

// NormCDFPDF returns Φ(x), the standard normal CDF, and φ(x), its density,
// in float32 (relative error about 3e-7 in Φ and φ, also in the tails where
// Φ is small, down to x = −12.949952; both are 0 below, see GELUFlushX2).
func NormCDFPDF(x float32) (cdf, pdf float32) {
	// e^(−z²) with z = |x|/√2: x²/2 is exact in float64; the rounding of
	// its float32 value would cost up to x²·3e-8 of relative error in the
	// tails, so the remainder is applied as a first-order correction. The
	// correction is taken on e·2^64, whose product with the remainder
	// stays normal where e's would be subnormal (x beyond about ±12.2): the
	// same bits wherever e's product is normal (a scaling by a power of 2
	// commutes with rounding there), and no microcode assist elsewhere.
	var e float32
	if float32(x*x) <= GELUFlushX2 || x != x {
		h64 := 0.5 * float64(x) * float64(x)
		h := float32(h64)
		es := Exp32(-h) * 0x1p64
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

// GELU32 is x·Φ(x) for one element.
func GELU32(x float32) float32 {
	cdf, _ := NormCDFPDF(x)
	return x * cdf
}

// GELU's tanh approximation 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³),
// is x·σ(2u) with σ the logistic function: one Exp32 and a division, and no
// cancellation for negative x. These are 2u's coefficients.
const (
	geluTanhC1 = 1.5957691216057308   // 2·√(2/π)
	geluTanhC3 = 0.071354816272924168 // 2·√(2/π)·0.044715
)

// GELUTanh32 is 0.5·x·(1 + tanh(u)) for one element, within about
// |2u|·2e-7 relative of the float64 reference (the rounding of 2u). Past |2u| > 88 the
// logistic factor is 0 or 1 in float32, as tanh(u) is ±1 in the
// reference.
func GELUTanh32(x float32) float32 {
	// float32 throughout: converting from float64 here made the loop
	// several times slower (measured), for no accuracy the tests need
	u2 := x * (geluTanhC1 + geluTanhC3*x*x)
	switch {
	case u2 > 88:
		return x
	case u2 < -88:
		return x * 0 // −0 for negative x, NaN for −Inf, like the reference
	}
	return x / (1 + Exp32(-u2))
}

// GELUTanhGrad32 is g·d/dx[x·σ(2u)] = g·(σ + x·σ·(1−σ)·2u′), with
// 1−σ = e^(−2u)·σ to keep its precision for large x.
func GELUTanhGrad32(g, x float32) float32 {
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
	e := Exp32(-u2)
	s := 1 / (1 + e)
	du2 := geluTanhC1 + 3*geluTanhC3*x*x
	return g * (s + x*s*(e*s)*du2)
}
