// Package math32cmp holds no code, only benchmarks that measure
// github.com/chewxy/math32 against Wick's float32 scalar math, which rounds
// the float64 functions of package math (float32(math.Exp(float64(x)))):
//
//	go test -run X -bench . ./internal/math32cmp
//
// BenchmarkAccuracy reports math32's largest distance, in float32 units in
// the last place (ulp), from the float64 function rounded to float32, and
// the share of 2²⁰ inputs where the two differ; BenchmarkSpeed* report ns
// per element for both.
//
// What they found (Intel Xeon with AVX-512, Go 1.26, math32 v1.11.1): math32
// is faster for Exp, Tanh, Sin and Cos but less accurate (Exp up to 118 ulp
// on 61% of inputs, Tanh 2 ulp, Sin and Cos 1–2 ulp on [−π, π] and millions
// of ulp past it); slower for Log (1 ulp) and Sqrt (exact, but an assembly
// call where the compiler turns float32(math.Sqrt(float64(x))) into one
// SQRTSS instruction); Erf is the float64 function rounded, as today. So
// Wick uses math32 only where it is exact and at least as fast: Inf, IsNaN
// and IsInf on float32 values, which need no conversion to float64 (Abs
// too would fit, 2.3 → 1.0 ns, but Wick's code has no float32 Abs outside
// the elementwise kernels).
package math32cmp
