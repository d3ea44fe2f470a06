package tensor

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestFMA32 checks fma32 against a·b + c rounded once by math/big, on
// random operands and on sums built to fall exactly halfway between two
// float32s in float64 (where rounding twice goes wrong).
func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 9))
	exact := func(a, b, c float32) float32 {
		p := new(big.Float).SetPrec(200).Mul(big.NewFloat(float64(a)), big.NewFloat(float64(b)))
		p.Add(p, big.NewFloat(float64(c)))
		f, _ := new(big.Float).SetPrec(24).SetMode(big.ToNearestEven).Set(p).Float32()
		return f
	}
	check := func(a, b, c float32) {
		if got, want := fma32(a, b, c), exact(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%g, %g, %g) = %g (%#x), want %g (%#x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for range 50000 {
		a := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(20)-10)))
		b := float32(r.IntN(1 << uint(r.IntN(24))))
		c := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(20)-10)))
		check(a, b, c)
		check(-a, b, c)
	}
	// a·b = 2⁻²⁴ − 2⁻⁶⁰ (a and b are float32s): added to c = 1 + 2⁻²³ the
	// float64 sum drops the 2⁻⁶⁰ and lands exactly halfway between c and
	// the next float32, which ties-to-even rounds up; the exact value is
	// below the tie, so the answer is c
	a := float32(math.Ldexp(1+math.Ldexp(1, -18), -24))
	bb := float32(1 - math.Ldexp(1, -18))
	c := float32(1 + math.Ldexp(1, -23))
	check(a, bb, c)
	check(-a, bb, -c)
	check(a, -bb, -c)
	if got := fma32(a, bb, c); got != c {
		t.Errorf("fma32 of the double-rounding case = %v, want %v", got, c)
	}
	check(3e38, 10, 1) // overflows to +Inf
	if v := fma32(float32(math.Inf(1)), 0, 1); v == v {
		t.Errorf("fma32(+Inf, 0, 1) = %v, want NaN", v)
	}
}
