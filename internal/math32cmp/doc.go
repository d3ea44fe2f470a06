// Package math32cmp holds no code, only benchmarks that measure
// github.com/chewxy/math32 against Wick's float32 scalar math, which rounds
// the float64 functions of package math (float32(math.Exp(float64(x)))):
//
//	go test -run X -bench . ./internal/math32cmp
//
// BenchmarkAccuracy reports math32's largest distance, in float32 units in
// the last place (ulp), from the float64 function rounded to float32, and
// the share of 2²⁰ inputs where the two differ; BenchmarkSpeed* report ns
// per element for both. TestExactWhereWickUsesIt checks that the functions
// Wick takes from math32 give what package math gives.
//
// What they found (Intel Xeon with AVX-512, 2 cores shared with other
// jobs, Go 1.26, math32 v1.11.1). Accuracy, which does not depend on the
// load: math32's Sqrt, Abs and Erf (the float64 function rounded, as today)
// agree everywhere; Log differs by 1 ulp on 0.8% of inputs, Tanh by up to
// 2 ulp on 3%, Sin and Cos by 1–2 ulp on 20–27% of [−π, π] and by millions
// of ulp past it (Sin on [−100, 100]), Exp by up to 118 ulp on 61%. Speed,
// which the load made noisy (±10–60%): math32 is faster for Exp (about
// 18 against 24 ns), Tanh, Sin and Cos (about half the time) and Abs (1.0
// against 1.5 ns), slower for Sqrt (4.3 against 1.7 ns: an assembly call,
// where the compiler turns float32(math.Sqrt(float64(x))) into one SQRTSS),
// and neither clearly for Log. So Wick uses math32 only where it is exact
// and at least as fast: Inf, IsNaN and IsInf on float32 values, which need
// no conversion to float64 (Abs would fit too, but Wick has no float32 Abs
// outside the elementwise kernels).
package math32cmp
