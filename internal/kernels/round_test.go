package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/internal/testseed"
)

// bf16Ref rounds v to bfloat16 with math/big (8 bits of precision, round
// to nearest even, bfloat16's exponent range and subnormals), as a float32:
// an independent derivation of what RoundBF16 computes on the bits.
func bf16Ref(v float32) float32 {
	if v != v {
		return math.Float32frombits(0xFFFF0000)
	}
	if math.IsInf(float64(v), 0) || v == 0 {
		return v
	}
	f := new(big.Float).SetFloat64(float64(v))
	e := f.MantExp(nil) // |v| = m·2^e, 0.5 ≤ m < 1
	prec := uint(8)
	if e < -125 { // bfloat16 subnormals: spacing 2^-133
		prec = uint(max(8-(-125-e), 0))
		if prec == 0 {
			// below half the smallest subnormal's spacing: 0 or 2^-133
			half := math.Ldexp(1, -134)
			a := math.Abs(float64(v))
			r := 0.0
			if a > half {
				r = math.Ldexp(1, -133)
			}
			return float32(math.Copysign(r, float64(v)))
		}
	}
	f.SetMode(big.ToNearestEven).SetPrec(prec)
	r, _ := f.Float64()
	if math.Abs(r) > math.MaxFloat32 {
		return float32(math.Copysign(math.Inf(1), r))
	}
	return float32(r)
}

// TestRoundBF16 checks RoundBF16 on each level against bf16Ref on ragged
// lengths of random values, ties, subnormals, the rounding into ±Inf and
// NaNs, bit for bit, writing into a separate slice and in place, and
// RoundBF16Bits against RoundBF16's high halves.
func TestRoundBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 9))
	special := []uint32{0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF,
		0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F7FFF, 0x7F7F8000, 0x00000001, 0x80008000, 0x00018000, 0x00008000,
		0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001, 0x007FFFFF, 0x00800000}
	for _, l := range levels() {
		restore := SetLevel(l)
		for range 40 {
			n := 1 + r.IntN(100)
			src := make([]float32, n)
			for i := range src {
				switch r.IntN(4) {
				case 0:
					src[i] = math.Float32frombits(special[r.IntN(len(special))])
				case 1:
					src[i] = math.Float32frombits(r.Uint32())
				case 2: // a tie or next to one
					src[i] = math.Float32frombits(r.Uint32()&^0xFFFF | 0x8000 + uint32(r.IntN(3)) - 1)
				default:
					src[i] = float32(r.NormFloat64())
				}
			}
			dst := make([]float32, n)
			RoundBF16(dst, src)
			for i, v := range src {
				if want := bf16Ref(v); math.Float32bits(dst[i]) != math.Float32bits(want) {
					t.Fatalf("%v: RoundBF16(%#08x) = %#08x, want %#08x", l, math.Float32bits(v), math.Float32bits(dst[i]), math.Float32bits(want))
				}
			}
			bits := make([]uint16, n)
			RoundBF16Bits(bits, src)
			for i := range src {
				if got, want := uint32(bits[i])<<16, math.Float32bits(dst[i]); got != want {
					t.Fatalf("%v: RoundBF16Bits(%#08x) = %#04x, want %#04x", l, math.Float32bits(src[i]), bits[i], want>>16)
				}
			}
			RoundBF16(src, src)
			for i := range src {
				if math.Float32bits(src[i]) != math.Float32bits(dst[i]) {
					t.Fatalf("%v: in place, element %d = %#08x, want %#08x", l, i, math.Float32bits(src[i]), math.Float32bits(dst[i]))
				}
			}
		}
		restore()
	}
}
