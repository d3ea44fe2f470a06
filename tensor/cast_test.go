package tensor_test

import (
	"math"
	"slices"
	"testing"

	"github.com/wickml/wick/tensor"
)

// castCases are float32 values with their int64 conversion on PyTorch's
// CPU: torch 1.13 (Debian's python3-torch, x86-64),
// torch.tensor(values, dtype=torch.float32).to(torch.int64).
var castCases = []struct {
	f float32
	i int64
}{
	{float32(math.NaN()), math.MinInt64},
	{float32(math.Inf(1)), math.MinInt64},
	{float32(math.Inf(-1)), math.MinInt64},
	{1e19, math.MinInt64},
	{-1e19, math.MinInt64},
	{0x1p63, math.MinInt64},                           // 2^63: one past the largest int64
	{-0x1p63, math.MinInt64},                          // −2^63 itself: in range
	{9.2233715e18, 9223371487098961920},               // the largest float32 below 2^63
	{3.7, 3}, {-3.7, -3}, {0.5, 0}, {-0.5, 0}, {0, 0}, // truncation toward zero
	{16777217, 16777216}, // float32 rounds 2^24+1 to 2^24 on the way in
}

// TestToInt64SpecialValues checks the float → int64 conversion of every
// CPU path (Long of contiguous and strided views and of Full, Ints) against
// PyTorch's CPU results.
func TestToInt64SpecialValues(t *testing.T) {
	fs := make([]float32, len(castCases))
	want := make([]int64, len(castCases))
	for i, c := range castCases {
		fs[i], want[i] = c.f, c.i
		if got := tensor.ToInt64(float64(c.f)); got != c.i {
			t.Errorf("ToInt64(%v) = %d, want %d", c.f, got, c.i)
		}
	}
	wantInts := make([]int, len(want))
	for i, v := range want {
		wantInts[i] = int(v)
	}
	x := tensor.New(fs, len(fs))
	if got := x.Long().Ints(); !slices.Equal(got, wantInts) {
		t.Errorf("Long:\n got %v\nwant %v", got, wantInts)
	}
	if got := x.Ints(); !slices.Equal(got, wantInts) {
		t.Errorf("Ints of a float32 tensor:\n got %v\nwant %v", got, wantInts)
	}
	// a strided view: every value twice, read backwards through a transpose
	two := tensor.Stack([]*tensor.Tensor{x, x}, 0).T() // [n, 2], strides (1, n)
	got := two.Long().Ints()
	for i := range wantInts {
		if got[2*i] != wantInts[i] || got[2*i+1] != wantInts[i] {
			t.Errorf("Long of a transposed view: element %d: got %d, %d, want %d", i, got[2*i], got[2*i+1], wantInts[i])
		}
	}
	for _, c := range castCases[:7] {
		if got := tensor.Full(c.f, 3).Long().Ints(); got[0] != int(c.i) || got[2] != int(c.i) {
			t.Errorf("Full(%v).Long(): got %v, want %d", c.f, got, c.i)
		}
	}
}
