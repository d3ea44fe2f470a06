package backendtest

import (
	"math"
	"testing"
)

// The suite's tolerances. Every check compares a backend's float32 results
// with a float64 reference and allows, per element,
//
//	elemRel·|want| + (what the sums behind the element may add)
//
// elemRel is the elementwise tolerance of docs/design.md, rule 7: a few float32 roundings and
// a transcendental function evaluated in float32 fit well inside it. A sum
// adds error in proportion to the size of its terms and to a factor that
// grows with their number n:
//
//   - sumErr(n) = γ_n = n·u/(1 − n·u), u = 2⁻²⁴, for sums that a backend
//     may accumulate in float32 (softmax and cross-entropy rows, matrix
//     products, attention): a float32 sum or dot product of n terms, in any
//     order, is within γ_n·Σ|terms| of the exact value (Higham, Accuracy
//     and Stability of Numerical Algorithms, §3.1 and §4.2). The
//     probabilistic bound λ·√n·u (Higham and Mary, 2019) assumes rounding
//     errors of random sign; a plain float32 loop over a row of positive
//     exponentials breaks that assumption (a term below half an ulp of the
//     running sum is always lost), and its error grows like n: measured on
//     the CPU's pure-Go path (WICK_CPU=purego), the sum of a 50,257-wide
//     row is off by up to 1.5e-4 relative (10.9·√n·u) and of a 500,000-wide
//     row by 6.7e-4 (15.9·√n·u), about 5% of γ_n; the AVX2 and AVX-512
//     paths, which keep 8 and 16 partial sums, stay under 2.4·√n·u. So the
//     suite allows γ_n, and a wrong element still fails: in a softmax row
//     an element taken from its neighbour is off by O(1), not by 3e-3.
//   - float64Err(n) = 2n·2⁻⁵³ for sums the kernel contract says are
//     accumulated in float64 (Reduce's sums, GlobalNorm, LayerNorm's
//     statistics): both backends do, so the suite holds them to it, and a
//     dropped or repeated term of a ten-million-element sum still fails.
//
// TestTolerance (tolerance_test.go) checks that these bounds accept the
// 1.4e-5 relative difference over a 50,257-wide softmax row seen on the
// emulated device and reject an element taken from its neighbour.
const (
	u       = 0x1p-24
	elemRel = 1e-5
)

// sumErr is the error bound γ_n of a float32 sum of n terms, relative to
// the sum of their absolute values.
func sumErr(n int) float64 {
	nu := float64(max(n, 1)) * u
	return nu / (1 - nu)
}

// float64Err is the error bound of a float64 sum of n terms relative to the
// sum of their absolute values (callers add the final rounding to float32,
// u relative to the result).
func float64Err(n int) float64 { return 2 * float64(max(n, 1)) * 0x1p-53 }

// matches reports whether got is within allowed of want: NaN matches NaN,
// an infinity (or a reference that overflows float32) matches itself.
func matches(got float32, want, allowed float64) bool {
	g := float64(got)
	if w32 := float32(want); math.IsInf(float64(w32), 0) && !math.IsInf(want, 0) {
		want = float64(w32)
	}
	switch {
	case math.IsNaN(want) || math.IsNaN(g):
		return math.IsNaN(want) && math.IsNaN(g)
	case math.IsInf(want, 0) || math.IsInf(g, 0):
		return g == want
	}
	return math.Abs(g-want) <= allowed
}

// checkBound fails t where got[i] is not within allowed[i] of want[i],
// reporting the first few.
func checkBound(t testing.TB, what string, got []float32, want, allowed []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if !matches(got[i], want[i], allowed[i]) {
			if bad < 5 {
				t.Errorf("%s: element %d: got %v, want %v ± %.3g", what, i, got[i], want[i], allowed[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(want))
	}
}

// checkRel fails t where |got − want| > rel·|want| + abs.
func checkRel(t testing.TB, what string, got []float32, want []float64, rel, abs float64) {
	t.Helper()
	allowed := make([]float64, len(want))
	for i, w := range want {
		allowed[i] = rel*math.Abs(w) + abs
	}
	checkBound(t, what, got, want, allowed)
}

// checkExact fails t where got differs from want (NaN matches NaN).
func checkExact(t testing.TB, what string, got, want []float32) {
	t.Helper()
	checkRel(t, what, got, to64(want), 0, 0)
}

// checkInts fails t where got differs from want.
func checkInts(t testing.TB, what string, got, want []int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			if bad < 5 {
				t.Errorf("%s: element %d: got %d, want %d", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(want))
	}
}
