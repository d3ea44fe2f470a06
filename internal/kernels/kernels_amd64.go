//go:build amd64 && !purego

package kernels

// The assembly kernels of kernels_amd64.s, each with a Go twin of the
// same name in kernels_noasm.go for builds without it (and the slice form
// of that twin in generic.go, which kernels_amd64_test.go compares with
// the assembly).

// hasAsm is true: this build has the assembly kernels (which run where
// internal/cpu says the processor supports them).
const hasAsm = true

// geluAVX2 writes x·Φ(x) for n elements, n a multiple of 8.
//
//go:noescape
func geluAVX2(dst, x *float32, n int)

// geluGradAVX2 writes g·(Φ(x) + x·φ(x)) for n elements, n a multiple of 8.
//
//go:noescape
func geluGradAVX2(dst, gr, x *float32, n int)

// adamwAVX2 is AdamW's loop for n elements, n a multiple of 8.
//
//go:noescape
func adamwAVX2(p, gr, m, v *float32, n int, c *AdamWConsts)

// maxAVX2 returns the largest of n elements (n a positive multiple of 8),
// or NaN if one is NaN.
//
//go:noescape
func maxAVX2(x *float32, n int) float32

// scaleAVX2 multiplies n elements (n a multiple of 8) by k in place.
//
//go:noescape
func scaleAVX2(x *float32, n int, k float32)

// addAVX2, subAVX2, mulAVX2 and divAVX2 write d[i] = a[i] op b[i] for n
// elements, n a multiple of 8 (IEEE results, identical to Go's).
//
//go:noescape
func addAVX2(d, a, b *float32, n int)

//go:noescape
func subAVX2(d, a, b *float32, n int)

//go:noescape
func mulAVX2(d, a, b *float32, n int)

//go:noescape
func divAVX2(d, a, b *float32, n int)

// expSubToAVX2 writes dst[i] = e^(x[i]−m) (dst may be x) for n elements, n a multiple of 8,
// and returns their sum.
//
//go:noescape
func expSubToAVX2(dst, x *float32, n int, m float32) (sum float32)

// geluAVX512 is geluAVX2 for n a multiple of 16.
//
//go:noescape
func geluAVX512(dst, x *float32, n int)

// geluGradAVX512 is geluGradAVX2 for n a multiple of 16.
//
//go:noescape
func geluGradAVX512(dst, gr, x *float32, n int)

// adamwAVX512 is adamwAVX2 for n a multiple of 16.
//
//go:noescape
func adamwAVX512(p, gr, m, v *float32, n int, c *AdamWConsts)

// maxAVX512 is maxAVX2 for n a positive multiple of 16.
//
//go:noescape
func maxAVX512(x *float32, n int) float32

// scaleAVX512 is scaleAVX2 for n a multiple of 16.
//
//go:noescape
func scaleAVX512(x *float32, n int, k float32)

// addAVX512, subAVX512, mulAVX512 and divAVX512 are addAVX2 and its
// siblings for n a multiple of 16.
//
//go:noescape
func addAVX512(d, a, b *float32, n int)

//go:noescape
func subAVX512(d, a, b *float32, n int)

//go:noescape
func mulAVX512(d, a, b *float32, n int)

//go:noescape
func divAVX512(d, a, b *float32, n int)

// addNTAVX2 and its siblings are addAVX2 and its siblings with
// non-temporal stores, for d aligned to 32 bytes; addNTAVX512 and its
// siblings are the AVX-512 ones, for d aligned to 64 bytes.
//
//go:noescape
func addNTAVX2(d, a, b *float32, n int)

//go:noescape
func subNTAVX2(d, a, b *float32, n int)

//go:noescape
func mulNTAVX2(d, a, b *float32, n int)

//go:noescape
func divNTAVX2(d, a, b *float32, n int)

//go:noescape
func addNTAVX512(d, a, b *float32, n int)

//go:noescape
func subNTAVX512(d, a, b *float32, n int)

//go:noescape
func mulNTAVX512(d, a, b *float32, n int)

//go:noescape
func divNTAVX512(d, a, b *float32, n int)

// expSubToAVX512 is expSubToAVX2 for n a multiple of 16 (the sum is taken
// over 16 lanes).
//
//go:noescape
func expSubToAVX512(dst, x *float32, n int, m float32) (sum float32)

// The row kernels of LayerNorm and softmax (see SUMF64 and the macros
// after it in kernels_amd64.s), n a multiple of 8 for the AVX2 ones and 16
// for the AVX-512 ones: the sums and LayerNorm's sweeps in float64 on
// float32 data, softmax's sweeps in float32.

//go:noescape
func sumF64AVX2(x *float32, n int) float64

//go:noescape
func lnSqDevAVX2(x *float32, n int, mu float64) float64

//go:noescape
func lnNormAVX2(dst, x, w, b *float32, n int, mu, r float64)

//go:noescape
func lnGradSumsAVX2(gr, x, w *float32, n int, mu, r float64, accW, accB *float64) (s1, s2 float64)

//go:noescape
func lnGradDxAVX2(dx, gr, x, w *float32, n int, mu, r, s1, s2 float64)

//go:noescape
func sumF64AVX512(x *float32, n int) float64

//go:noescape
func lnSqDevAVX512(x *float32, n int, mu float64) float64

//go:noescape
func lnNormAVX512(dst, x, w, b *float32, n int, mu, r float64)

//go:noescape
func lnGradSumsAVX512(gr, x, w *float32, n int, mu, r float64, accW, accB *float64) (s1, s2 float64)

//go:noescape
func lnGradDxAVX512(dx, gr, x, w *float32, n int, mu, r, s1, s2 float64)

//go:noescape
func dotF64AVX2(a, b *float32, n int) float64

//go:noescape
func dotF64AVX512(a, b *float32, n int) float64

//go:noescape
func softmaxGradAVX2(d, y, gr *float32, n int, a float32)

// softmaxScaledAVX2 replaces n elements (n a positive multiple of 8) by
// softmax(x·scale), as SoftmaxScaled does with the AVX2 kernels.
//
//go:noescape
func softmaxScaledAVX2(x *float32, n int, scale float32)

// softmaxGradRowAVX2 is SoftmaxGradScaled on n elements (a multiple of 8) with
// the AVX2 kernels.
//
//go:noescape
func softmaxGradRowAVX2(d, p *float32, n int, scale float32)

//go:noescape
func softmaxGradAVX512(d, y, gr *float32, n int, a float32)

//go:noescape
func logSoftmaxGradAVX2(d, gr *float32, n int, a float32)

//go:noescape
func logSoftmaxGradAVX512(d, gr *float32, n int, a float32)

//go:noescape
func logSoftmaxAVX2(y, x *float32, n int, m, c float32)

//go:noescape
func logSoftmaxAVX512(y, x *float32, n int, m, c float32)

// expAVX2 writes e^x for n elements, n a multiple of 8, in float32
// arithmetic with one final rounding (see kernels_amd64.s): each result is
// within 1 ulp of the Go reference float32(math.Exp(float64(x))).
//
//go:noescape
func expAVX2(dst, x *float32, n int)

// tanhAVX2 and sigmoidAVX2 write tanh(x) and 1/(1 + e^−x) for n elements,
// n a multiple of 8, computed in float64 and rounded once (see
// kernels_amd64.s): each result is within 1 ulp of the Go reference's
// and almost always equal to it.
//
//go:noescape
func tanhAVX2(dst, x *float32, n int)

//go:noescape
func sigmoidAVX2(dst, x *float32, n int)

// expAVX512, tanhAVX512 and sigmoidAVX512 are expAVX2 and its siblings
// for n a multiple of 16, with the same results bit for bit.
//
//go:noescape
func expAVX512(dst, x *float32, n int)

//go:noescape
func tanhAVX512(dst, x *float32, n int)

//go:noescape
func sigmoidAVX512(dst, x *float32, n int)
