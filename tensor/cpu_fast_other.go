//go:build !amd64 || purego

package tensor

// streamMinElems is unused: there are no non-temporal kernels here.
var streamMinElems = 0

// geluAsm is false: there are no assembly kernels for this platform.
var geluAsm = false

func geluAVX2(dst, x *float32, n int)         { panic("tensor: geluAVX2 without assembly") }
func geluGradAVX2(dst, gr, x *float32, n int) { panic("tensor: geluGradAVX2 without assembly") }

func adamwAVX2(p, gr, m, v *float32, n int, c *adamwConsts) {
	panic("tensor: adamwAVX2 without assembly")
}

func maxAVX2(x *float32, n int) float32      { panic("tensor: maxAVX2 without assembly") }
func scaleAVX2(x *float32, n int, k float32) { panic("tensor: scaleAVX2 without assembly") }
func addAVX2(d, a, b *float32, n int)        { panic("tensor: addAVX2 without assembly") }
func subAVX2(d, a, b *float32, n int)        { panic("tensor: subAVX2 without assembly") }
func mulAVX2(d, a, b *float32, n int)        { panic("tensor: mulAVX2 without assembly") }
func divAVX2(d, a, b *float32, n int)        { panic("tensor: divAVX2 without assembly") }

func expSubToAVX2(dst, x *float32, n int, m float32) float32 {
	panic("tensor: expSubToAVX2 without assembly")
}

// avx512Asm is false: there are no assembly kernels for this platform.
var avx512Asm = false

func geluAVX512(dst, x *float32, n int)         { panic("tensor: geluAVX512 without assembly") }
func geluGradAVX512(dst, gr, x *float32, n int) { panic("tensor: geluGradAVX512 without assembly") }

func adamwAVX512(p, gr, m, v *float32, n int, c *adamwConsts) {
	panic("tensor: adamwAVX512 without assembly")
}

func maxAVX512(x *float32, n int) float32      { panic("tensor: maxAVX512 without assembly") }
func scaleAVX512(x *float32, n int, k float32) { panic("tensor: scaleAVX512 without assembly") }
func addAVX512(d, a, b *float32, n int)        { panic("tensor: addAVX512 without assembly") }
func subAVX512(d, a, b *float32, n int)        { panic("tensor: subAVX512 without assembly") }
func mulAVX512(d, a, b *float32, n int)        { panic("tensor: mulAVX512 without assembly") }
func divAVX512(d, a, b *float32, n int)        { panic("tensor: divAVX512 without assembly") }
func addNTAVX2(d, a, b *float32, n int)        { panic("tensor: addNTAVX2 without assembly") }
func subNTAVX2(d, a, b *float32, n int)        { panic("tensor: subNTAVX2 without assembly") }
func mulNTAVX2(d, a, b *float32, n int)        { panic("tensor: mulNTAVX2 without assembly") }
func divNTAVX2(d, a, b *float32, n int)        { panic("tensor: divNTAVX2 without assembly") }
func addNTAVX512(d, a, b *float32, n int)      { panic("tensor: addNTAVX512 without assembly") }
func subNTAVX512(d, a, b *float32, n int)      { panic("tensor: subNTAVX512 without assembly") }
func mulNTAVX512(d, a, b *float32, n int)      { panic("tensor: mulNTAVX512 without assembly") }
func divNTAVX512(d, a, b *float32, n int)      { panic("tensor: divNTAVX512 without assembly") }

func expSubToAVX512(dst, x *float32, n int, m float32) float32 {
	panic("tensor: expSubToAVX512 without assembly")
}

// hasAsm is false: this build has no assembly kernels.
const hasAsm = false

func sumF64AVX2(x *float32, n int) float64 { panic("tensor: sumF64AVX2 without assembly") }

func lnSqDevAVX2(x *float32, n int, mu float64) float64 {
	panic("tensor: lnSqDevAVX2 without assembly")
}

func lnNormAVX2(dst, x, w, b *float32, n int, mu, r float64) {
	panic("tensor: lnNormAVX2 without assembly")
}

func lnGradSumsAVX2(gr, x, w *float32, n int, mu, r float64, accW, accB *float64) (s1, s2 float64) {
	panic("tensor: lnGradSumsAVX2 without assembly")
}

func lnGradDxAVX2(dx, gr, x, w *float32, n int, mu, r, s1, s2 float64) {
	panic("tensor: lnGradDxAVX2 without assembly")
}

func sumF64AVX512(x *float32, n int) float64 { panic("tensor: sumF64AVX512 without assembly") }

func lnSqDevAVX512(x *float32, n int, mu float64) float64 {
	panic("tensor: lnSqDevAVX512 without assembly")
}

func lnNormAVX512(dst, x, w, b *float32, n int, mu, r float64) {
	panic("tensor: lnNormAVX512 without assembly")
}

func lnGradSumsAVX512(gr, x, w *float32, n int, mu, r float64, accW, accB *float64) (s1, s2 float64) {
	panic("tensor: lnGradSumsAVX512 without assembly")
}

func lnGradDxAVX512(dx, gr, x, w *float32, n int, mu, r, s1, s2 float64) {
	panic("tensor: lnGradDxAVX512 without assembly")
}

func dotF64AVX2(a, b *float32, n int) float64   { panic("tensor: dotF64AVX2 without assembly") }
func dotF64AVX512(a, b *float32, n int) float64 { panic("tensor: dotF64AVX512 without assembly") }

func softmaxGradAVX2(d, y, gr *float32, n int, a float32) {
	panic("tensor: softmaxGradAVX2 without assembly")
}

func softmaxGradAVX512(d, y, gr *float32, n int, a float32) {
	panic("tensor: softmaxGradAVX512 without assembly")
}

func logSoftmaxGradAVX2(d, gr *float32, n int, a float32) {
	panic("tensor: logSoftmaxGradAVX2 without assembly")
}

func logSoftmaxGradAVX512(d, gr *float32, n int, a float32) {
	panic("tensor: logSoftmaxGradAVX512 without assembly")
}

func logSoftmaxAVX2(y, x *float32, n int, m, c float32) {
	panic("tensor: logSoftmaxAVX2 without assembly")
}

func logSoftmaxAVX512(y, x *float32, n int, m, c float32) {
	panic("tensor: logSoftmaxAVX512 without assembly")
}

func expAVX2(dst, x *float32, n int)       { panic("tensor: expAVX2 without assembly") }
func tanhAVX2(dst, x *float32, n int)      { panic("tensor: tanhAVX2 without assembly") }
func sigmoidAVX2(dst, x *float32, n int)   { panic("tensor: sigmoidAVX2 without assembly") }
func expAVX512(dst, x *float32, n int)     { panic("tensor: expAVX512 without assembly") }
func tanhAVX512(dst, x *float32, n int)    { panic("tensor: tanhAVX512 without assembly") }
func sigmoidAVX512(dst, x *float32, n int) { panic("tensor: sigmoidAVX512 without assembly") }

func softmaxScaledAVX2(x *float32, n int, scale float32) {
	panic("tensor: softmaxScaledAVX2 without assembly")
}

func softmaxGradRowAVX2(d, p *float32, n int, scale float32) {
	panic("tensor: softmaxGradRowAVX2 without assembly")
}
