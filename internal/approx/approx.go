// Package approx is the one float comparison of Wick's tests: got equals
// want within a relative and an absolute tolerance, as go-cmp's
// cmpopts.EquateApprox defines them, with NaN equal to NaN and infinities
// equal only to themselves. Only tests import it.
//
// Two numbers x (got) and y (want) are equal when
//
//	|x − y| ≤ max(atol, rtol·min(|x|, |y|))
//
// The float32 tolerances of docs/design.md (rule 7) are the constants
// below: 1e-5 relative for elementwise ops and views, 1e-4 for reductions,
// matmuls and modules; the absolute tolerance covers the elements near
// zero, where a relative bound alone would ask for more than float32
// rounding gives.
package approx

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The tolerances of docs/design.md (rule 7) for float32 results.
const (
	// ElementwiseRTol and ElementwiseATol are for elementwise ops and views.
	ElementwiseRTol = 1e-5
	ElementwiseATol = 1e-6
	// ReduceRTol and ReduceATol are for reductions, matmuls and modules.
	ReduceRTol = 1e-4
	ReduceATol = 1e-5
)

// Tensor is what EqualTensor reads of a tensor: tensor.Tensor has both
// methods. (An interface keeps this package free of the tensor import, so
// that tensor's own tests can use it.)
type Tensor interface {
	Shape() []int
	Float32s() []float32
}

// Float is the element type of the slices Index and Equal compare.
type Float interface{ ~float32 | ~float64 }

// Options returns the go-cmp options that make two float32s or float64s
// equal within rtol and atol, NaN equal to NaN. It panics if a tolerance
// is negative or NaN.
func Options(rtol, atol float64) cmp.Option {
	return cmp.Options{cmpopts.EquateApprox(rtol, atol), cmpopts.EquateNaNs()}
}

// Index returns the first index at which got and want differ by more than
// the tolerances (len(got) if got is shorter than want, len(want) if it is
// longer), or -1 if they are equal. Each element is compared as a
// float64, so a float64 reference is not rounded to float32 first.
//
// go-cmp spends microseconds on each comparison, too long for goldens and
// property tests of many thousand elements, so Index first asks within,
// which computes EquateApprox's formula (TestWithinIsEquateApprox keeps the
// two the same), and lets go-cmp decide every element within rejects.
func Index[G, W Float](got []G, want []W, rtol, atol float64) int {
	var opt cmp.Option
	for i := range want {
		if i >= len(got) {
			return i
		}
		g, w := float64(got[i]), float64(want[i])
		if within(g, w, rtol, atol) {
			continue
		}
		if opt == nil {
			opt = Options(rtol, atol)
		}
		if !cmp.Equal(g, w, opt) {
			return i
		}
	}
	if len(got) > len(want) {
		return len(want)
	}
	return -1
}

// within is Options(rtol, atol) for two numbers, computed directly.
func within(a, b, rtol, atol float64) bool {
	switch {
	case a == b:
		return true
	case math.IsNaN(a) || math.IsNaN(b):
		return math.IsNaN(a) && math.IsNaN(b)
	case math.IsInf(a, 0) || math.IsInf(b, 0):
		return false
	}
	return math.Abs(a-b) <= math.Max(atol, rtol*math.Min(math.Abs(a), math.Abs(b)))
}

// Scalar reports whether got equals want within rtol and atol.
func Scalar(got, want, rtol, atol float64) bool {
	return Index([]float64{got}, []float64{want}, rtol, atol) < 0
}

// Equal reports whether got equals want element by element within rtol and
// atol. If not, it fails tb with the first differing index, both values,
// their difference, both tolerances and how many elements differ.
func Equal[G, W Float](tb testing.TB, what string, got []G, want []W, rtol, atol float64) bool {
	tb.Helper()
	if len(got) != len(want) {
		tb.Errorf("%s: %d elements, want %d", what, len(got), len(want))
		return false
	}
	i := Index(got, want, rtol, atol)
	if i < 0 {
		return true
	}
	bad := 1
	for j := i + 1; j < len(want); j++ {
		if Index(got[j:j+1], want[j:j+1], rtol, atol) >= 0 {
			bad++
		}
	}
	tb.Errorf("%s: %s; %d of %d elements differ", what, describe(i, float64(got[i]), float64(want[i]), rtol, atol), bad, len(want))
	return false
}

// EqualTensor is Equal for two tensors, which must also have the same
// shape.
func EqualTensor(tb testing.TB, what string, got, want Tensor, rtol, atol float64) bool {
	tb.Helper()
	if gs, ws := got.Shape(), want.Shape(); !slices.Equal(gs, ws) {
		tb.Errorf("%s: shape %v, want %v", what, gs, ws)
		return false
	}
	return Equal(tb, what, got.Float32s(), want.Float32s(), rtol, atol)
}

// EqualScalar is Equal for one number.
func EqualScalar(tb testing.TB, what string, got, want, rtol, atol float64) bool {
	tb.Helper()
	if Scalar(got, want, rtol, atol) {
		return true
	}
	tb.Errorf("%s: %s", what, describe(-1, got, want, rtol, atol))
	return false
}

func describe(i int, got, want, rtol, atol float64) string {
	at := ""
	if i >= 0 {
		at = fmt.Sprintf("element %d ", i)
	}
	return fmt.Sprintf("%sgot %.9g, want %.9g (|diff| %.3g > max(atol %g, rtol %g × min(|got|, |want|)))",
		at, got, want, math.Abs(got-want), atol, rtol)
}
