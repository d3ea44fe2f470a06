//go:build !amd64 || purego

package kernels

import "unsafe"

// The Go twins of the assembly kernels under their names, for builds
// without kernels_amd64.s (other architectures, the purego tag): each
// computes what its kernel computes, with the slice twin of generic.go.
// Keep this file in step with the declarations of kernels_amd64.go.

// hasAsm is false: this build has no assembly kernels, and the slice
// kernels run their Go parts only.
const hasAsm = false

// f32s and f64s view n elements from p as a slice (nil for a nil p).
func f32s(p *float32, n int) []float32 {
	if p == nil {
		return nil
	}
	return unsafe.Slice(p, n)
}

func f64s(p *float64, n int) []float64 {
	if p == nil {
		return nil
	}
	return unsafe.Slice(p, n)
}

func geluAVX2(dst, x *float32, n int)           { geluGo(f32s(dst, n), f32s(x, n)) }
func geluAVX512(dst, x *float32, n int)         { geluGo(f32s(dst, n), f32s(x, n)) }
func geluGradAVX2(dst, gr, x *float32, n int)   { geluGradGo(f32s(dst, n), f32s(gr, n), f32s(x, n)) }
func geluGradAVX512(dst, gr, x *float32, n int) { geluGradGo(f32s(dst, n), f32s(gr, n), f32s(x, n)) }
func expAVX2(dst, x *float32, n int)            { expGo(f32s(dst, n), f32s(x, n)) }
func expAVX512(dst, x *float32, n int)          { expGo(f32s(dst, n), f32s(x, n)) }
func tanhAVX2(dst, x *float32, n int)           { tanhGo(f32s(dst, n), f32s(x, n)) }
func tanhAVX512(dst, x *float32, n int)         { tanhGo(f32s(dst, n), f32s(x, n)) }
func sigmoidAVX2(dst, x *float32, n int)        { sigmoidGo(f32s(dst, n), f32s(x, n)) }
func sigmoidAVX512(dst, x *float32, n int)      { sigmoidGo(f32s(dst, n), f32s(x, n)) }
func adamwAVX2(p, gr, m, v *float32, n int, c *AdamWConsts) {
	adamwGo(f32s(p, n), f32s(gr, n), f32s(m, n), f32s(v, n), c)
}
func adamwAVX512(p, gr, m, v *float32, n int, c *AdamWConsts) {
	adamwGo(f32s(p, n), f32s(gr, n), f32s(m, n), f32s(v, n), c)
}
func maxAVX2(x *float32, n int) float32        { return maxGo(f32s(x, n)) }
func maxAVX512(x *float32, n int) float32      { return maxGo(f32s(x, n)) }
func scaleAVX2(x *float32, n int, k float32)   { scaleGo(f32s(x, n), k) }
func scaleAVX512(x *float32, n int, k float32) { scaleGo(f32s(x, n), k) }
func expSubToAVX2(dst, x *float32, n int, m float32) float32 {
	return expSubToGo(f32s(dst, n), f32s(x, n), m)
}
func expSubToAVX512(dst, x *float32, n int, m float32) float32 {
	return expSubToGo(f32s(dst, n), f32s(x, n), m)
}
func sumF64AVX2(x *float32, n int) float64                { return sumF64Go(f32s(x, n)) }
func sumF64AVX512(x *float32, n int) float64              { return sumF64Go(f32s(x, n)) }
func dotF64AVX2(a, b *float32, n int) float64             { return dotF64Go(f32s(a, n), f32s(b, n)) }
func dotF64AVX512(a, b *float32, n int) float64           { return dotF64Go(f32s(a, n), f32s(b, n)) }
func lnSqDevAVX2(x *float32, n int, mu float64) float64   { return lnSqDevGo(f32s(x, n), mu) }
func lnSqDevAVX512(x *float32, n int, mu float64) float64 { return lnSqDevGo(f32s(x, n), mu) }
func lnNormAVX2(dst, x, w, b *float32, n int, mu, r float64) {
	lnNormGo(f32s(dst, n), f32s(x, n), f32s(w, n), f32s(b, n), mu, r)
}
func lnNormAVX512(dst, x, w, b *float32, n int, mu, r float64) {
	lnNormGo(f32s(dst, n), f32s(x, n), f32s(w, n), f32s(b, n), mu, r)
}
func lnGradSumsAVX2(gr, x, w *float32, n int, mu, r float64, accW, accB *float64) (s1, s2 float64) {
	return lnGradSumsGo(f32s(gr, n), f32s(x, n), f32s(w, n), mu, r, f64s(accW, n), f64s(accB, n))
}
func lnGradSumsAVX512(gr, x, w *float32, n int, mu, r float64, accW, accB *float64) (s1, s2 float64) {
	return lnGradSumsGo(f32s(gr, n), f32s(x, n), f32s(w, n), mu, r, f64s(accW, n), f64s(accB, n))
}
func lnGradDxAVX2(dx, gr, x, w *float32, n int, mu, r, s1, s2 float64) {
	lnGradDxGo(f32s(dx, n), f32s(gr, n), f32s(x, n), f32s(w, n), mu, r, s1, s2)
}
func lnGradDxAVX512(dx, gr, x, w *float32, n int, mu, r, s1, s2 float64) {
	lnGradDxGo(f32s(dx, n), f32s(gr, n), f32s(x, n), f32s(w, n), mu, r, s1, s2)
}
func softmaxGradAVX2(d, y, gr *float32, n int, a float32) {
	softmaxGradGo(f32s(d, n), f32s(y, n), f32s(gr, n), a)
}
func softmaxGradAVX512(d, y, gr *float32, n int, a float32) {
	softmaxGradGo(f32s(d, n), f32s(y, n), f32s(gr, n), a)
}
func logSoftmaxGradAVX2(d, gr *float32, n int, a float32) {
	logSoftmaxGradGo(f32s(d, n), f32s(gr, n), a)
}
func logSoftmaxGradAVX512(d, gr *float32, n int, a float32) {
	logSoftmaxGradGo(f32s(d, n), f32s(gr, n), a)
}
func logSoftmaxAVX2(y, x *float32, n int, m, c float32)   { logSoftmaxGo(f32s(y, n), f32s(x, n), m, c) }
func logSoftmaxAVX512(y, x *float32, n int, m, c float32) { logSoftmaxGo(f32s(y, n), f32s(x, n), m, c) }
func addAVX2(d, a, b *float32, n int)                     { arithGo(Add, f32s(d, n), f32s(a, n), f32s(b, n)) }
func addAVX512(d, a, b *float32, n int)                   { arithGo(Add, f32s(d, n), f32s(a, n), f32s(b, n)) }
func addNTAVX2(d, a, b *float32, n int)                   { arithGo(Add, f32s(d, n), f32s(a, n), f32s(b, n)) }
func addNTAVX512(d, a, b *float32, n int)                 { arithGo(Add, f32s(d, n), f32s(a, n), f32s(b, n)) }
func subAVX2(d, a, b *float32, n int)                     { arithGo(Sub, f32s(d, n), f32s(a, n), f32s(b, n)) }
func subAVX512(d, a, b *float32, n int)                   { arithGo(Sub, f32s(d, n), f32s(a, n), f32s(b, n)) }
func subNTAVX2(d, a, b *float32, n int)                   { arithGo(Sub, f32s(d, n), f32s(a, n), f32s(b, n)) }
func subNTAVX512(d, a, b *float32, n int)                 { arithGo(Sub, f32s(d, n), f32s(a, n), f32s(b, n)) }
func mulAVX2(d, a, b *float32, n int)                     { arithGo(Mul, f32s(d, n), f32s(a, n), f32s(b, n)) }
func mulAVX512(d, a, b *float32, n int)                   { arithGo(Mul, f32s(d, n), f32s(a, n), f32s(b, n)) }
func mulNTAVX2(d, a, b *float32, n int)                   { arithGo(Mul, f32s(d, n), f32s(a, n), f32s(b, n)) }
func mulNTAVX512(d, a, b *float32, n int)                 { arithGo(Mul, f32s(d, n), f32s(a, n), f32s(b, n)) }
func divAVX2(d, a, b *float32, n int)                     { arithGo(Div, f32s(d, n), f32s(a, n), f32s(b, n)) }
func divAVX512(d, a, b *float32, n int)                   { arithGo(Div, f32s(d, n), f32s(a, n), f32s(b, n)) }
func divNTAVX2(d, a, b *float32, n int)                   { arithGo(Div, f32s(d, n), f32s(a, n), f32s(b, n)) }
func divNTAVX512(d, a, b *float32, n int)                 { arithGo(Div, f32s(d, n), f32s(a, n), f32s(b, n)) }

func softmaxScaledAVX2(x *float32, n int, scale float32) { softmaxScaledGo(f32s(x, n), scale) }
func softmaxGradRowAVX2(d, p *float32, n int, scale float32) {
	softmaxGradRowGo(f32s(d, n), f32s(p, n), scale)
}
