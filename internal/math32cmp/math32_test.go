package math32cmp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/chewxy/math32"
)

// fn is one function in both forms, with the inputs to try it on.
type fn struct {
	name   string
	f64    func(float64) float64 // rounded to float32 by the caller
	f32    func(float32) float32
	lo, hi float32 // the input range
}

var fns = []fn{
	{"Exp", math.Exp, math32.Exp, -87, 88},
	{"Log", math.Log, math32.Log, 1e-30, 1e30},
	{"Sqrt", math.Sqrt, math32.Sqrt, 0, 1e30},
	{"Tanh", math.Tanh, math32.Tanh, -10, 10},
	{"Sin", math.Sin, math32.Sin, -3.1415927, 3.1415927},
	{"Cos", math.Cos, math32.Cos, -3.1415927, 3.1415927},
	{"Sin100", math.Sin, math32.Sin, -100, 100},
	{"Erf", math.Erf, math32.Erf, -5, 5},
	{"Pow0.5", func(x float64) float64 { return math.Pow(x, 0.5) }, func(x float32) float32 { return math32.Pow(x, 0.5) }, 0, 1e30},
	{"Abs", math.Abs, math32.Abs, -1e30, 1e30},
}

// inputs returns n values spread over [lo, hi]: log-uniform in magnitude
// when the range spans decades, uniform otherwise.
func inputs(lo, hi float32, n int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n)
	for i := range x {
		if lo >= 0 && hi/max(lo, 1e-30) > 1e6 {
			l, h := math.Log(float64(max(lo, 1e-30))), math.Log(float64(hi))
			x[i] = float32(math.Exp(l + (h-l)*r.Float64()))
		} else if lo < 0 && hi > 1e6 {
			x[i] = float32(math.Exp(math.Log(float64(hi))*r.Float64()) * float64(1-2*r.IntN(2)))
		} else {
			x[i] = lo + (hi-lo)*r.Float32()
		}
	}
	return x
}

// ulps returns the distance between a and b in float32 units in the last
// place.
func ulps(a, b float32) float64 {
	if a == b || a != a && b != b {
		return 0
	}
	ia, ib := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if ia < 0x80000000 != (ib < 0x80000000) { // opposite signs
		return math.Abs(float64(ia&0x7fffffff)) + math.Abs(float64(ib&0x7fffffff))
	}
	return math.Abs(float64(ia - ib))
}

var sink float32

// BenchmarkAccuracy reports, for each function, math32's largest distance
// in ulp from the float64 function rounded to float32, and the share of
// 2²⁰ inputs where the two differ. (Its ns/op is only the check's.)
func BenchmarkAccuracy(b *testing.B) {
	for _, f := range fns {
		b.Run(f.name, func(b *testing.B) {
			x := inputs(f.lo, f.hi, 1<<20)
			worst, differ := 0.0, 0
			for b.Loop() {
				worst, differ = 0, 0
				for _, v := range x {
					if d := ulps(f.f32(v), float32(f.f64(float64(v)))); d > 0 {
						differ++
						worst = max(worst, d)
					}
				}
			}
			b.ReportMetric(worst, "max-ulp")
			b.ReportMetric(float64(differ)/float64(len(x)), "share-differing")
		})
	}
}

// speed runs body over 4096 inputs of [lo, hi] and reports ns per element.
func speed(b *testing.B, lo, hi float32, body func(x []float32) float32) {
	x := inputs(lo, hi, 4096)
	var s float32
	for b.Loop() {
		s += body(x)
	}
	sink = s
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/elem")
}

func BenchmarkSpeedExp(b *testing.B) {
	b.Run("math", func(b *testing.B) {
		speed(b, -87, 88, func(x []float32) (s float32) {
			for _, v := range x {
				s += float32(math.Exp(float64(v)))
			}
			return s
		})
	})
	b.Run("math32", func(b *testing.B) {
		speed(b, -87, 88, func(x []float32) (s float32) {
			for _, v := range x {
				s += math32.Exp(v)
			}
			return s
		})
	})
}

func BenchmarkSpeedLog(b *testing.B) {
	b.Run("math", func(b *testing.B) {
		speed(b, 1e-30, 1e30, func(x []float32) (s float32) {
			for _, v := range x {
				s += float32(math.Log(float64(v)))
			}
			return s
		})
	})
	b.Run("math32", func(b *testing.B) {
		speed(b, 1e-30, 1e30, func(x []float32) (s float32) {
			for _, v := range x {
				s += math32.Log(v)
			}
			return s
		})
	})
}

func BenchmarkSpeedSqrt(b *testing.B) {
	b.Run("math", func(b *testing.B) {
		speed(b, 0, 1e30, func(x []float32) (s float32) {
			for _, v := range x {
				s += float32(math.Sqrt(float64(v)))
			}
			return s
		})
	})
	b.Run("math32", func(b *testing.B) {
		speed(b, 0, 1e30, func(x []float32) (s float32) {
			for _, v := range x {
				s += math32.Sqrt(v)
			}
			return s
		})
	})
}

func BenchmarkSpeedTanh(b *testing.B) {
	b.Run("math", func(b *testing.B) {
		speed(b, -10, 10, func(x []float32) (s float32) {
			for _, v := range x {
				s += float32(math.Tanh(float64(v)))
			}
			return s
		})
	})
	b.Run("math32", func(b *testing.B) {
		speed(b, -10, 10, func(x []float32) (s float32) {
			for _, v := range x {
				s += math32.Tanh(v)
			}
			return s
		})
	})
}

func BenchmarkSpeedSin(b *testing.B) {
	b.Run("math", func(b *testing.B) {
		speed(b, -3.1415927, 3.1415927, func(x []float32) (s float32) {
			for _, v := range x {
				s += float32(math.Sin(float64(v)))
			}
			return s
		})
	})
	b.Run("math32", func(b *testing.B) {
		speed(b, -3.1415927, 3.1415927, func(x []float32) (s float32) {
			for _, v := range x {
				s += math32.Sin(v)
			}
			return s
		})
	})
}

func BenchmarkSpeedCos(b *testing.B) {
	b.Run("math", func(b *testing.B) {
		speed(b, -3.1415927, 3.1415927, func(x []float32) (s float32) {
			for _, v := range x {
				s += float32(math.Cos(float64(v)))
			}
			return s
		})
	})
	b.Run("math32", func(b *testing.B) {
		speed(b, -3.1415927, 3.1415927, func(x []float32) (s float32) {
			for _, v := range x {
				s += math32.Cos(v)
			}
			return s
		})
	})
}

func BenchmarkSpeedAbs(b *testing.B) {
	b.Run("math", func(b *testing.B) {
		speed(b, -10, 10, func(x []float32) (s float32) {
			for _, v := range x {
				s += float32(math.Abs(float64(v)))
			}
			return s
		})
	})
	b.Run("math32", func(b *testing.B) {
		speed(b, -10, 10, func(x []float32) (s float32) {
			for _, v := range x {
				s += math32.Abs(v)
			}
			return s
		})
	})
}

// TestExactWhereWickUsesIt checks the claim behind Wick's use of math32:
// its Inf, IsNaN and IsInf give what the float64 functions give, on the
// special values and on every 4099th float32 bit pattern.
func TestExactWhereWickUsesIt(t *testing.T) {
	for _, s := range []int{-1, 0, 1} {
		if got, want := math32.Inf(s), float32(math.Inf(s)); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("Inf(%d) = %v, want %v", s, got, want)
		}
	}
	check := func(x float32) {
		f := float64(x)
		if math32.IsNaN(x) != math.IsNaN(f) {
			t.Fatalf("IsNaN(%v) = %v", x, math32.IsNaN(x))
		}
		for _, s := range []int{-1, 0, 1} {
			if math32.IsInf(x, s) != math.IsInf(f, s) {
				t.Fatalf("IsInf(%v, %d) = %v", x, s, math32.IsInf(x, s))
			}
		}
	}
	for _, x := range []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		check(x)
	}
	for b := uint64(0); b < 1<<32; b += 4099 {
		check(math.Float32frombits(uint32(b)))
	}
}
