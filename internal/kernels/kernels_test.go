package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/testseed"
)

// levels returns the levels this build and machine run, lowest first.
func levels() []cpu.Level {
	ls := []cpu.Level{cpu.Generic}
	if hasAsm {
		for _, l := range []cpu.Level{cpu.AVX2, cpu.AVX512} {
			if cpu.Detected >= l {
				ls = append(ls, l)
			}
		}
	}
	return ls
}

// TestSliceKernelsOnEachLevel checks the slice functions on each level this
// build runs (the Go twins alone in a purego build) against float64
// references on ragged lengths, so that the vector blocks and the Go tail
// are both exercised: SumF64 and DotF64 within 1e-12 relative of the sum of
// magnitudes, Arith exact, Max exact, ExpSubTo within 2 ulp per element,
// LayerNormRow within 1e-6 relative.
func TestSliceKernelsOnEachLevel(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 5))
	for _, l := range levels() {
		restore := SetLevel(l)
		for range 30 {
			n := 1 + r.IntN(200)
			a, b := make([]float32, n), make([]float32, n)
			var mag, sum, dot float64
			for i := range a {
				a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
				mag += math.Abs(float64(a[i])) * (1 + math.Abs(float64(b[i])))
				sum += float64(a[i])
				dot += float64(a[i]) * float64(b[i])
			}
			if got := SumF64(a); math.Abs(got-sum) > 1e-12*mag {
				t.Fatalf("%v: SumF64 of %d = %v, want %v", l, n, got, sum)
			}
			if got := DotF64(a, b); math.Abs(got-dot) > 1e-12*mag {
				t.Fatalf("%v: DotF64 of %d = %v, want %v", l, n, got, dot)
			}
			m := a[0]
			for _, v := range a {
				m = max(m, v)
			}
			if got := Max(a); got != m {
				t.Fatalf("%v: Max of %d = %v, want %v", l, n, got, m)
			}
			d := make([]float32, n)
			for _, op := range []ArithOp{Add, Sub, Mul, Div} {
				for _, stream := range []bool{false, true} {
					Arith(op, d, a, b, stream)
					for i := range d {
						want := [...]float32{a[i] + b[i], a[i] - b[i], a[i] * b[i], a[i] / b[i]}[op]
						if math.Float32bits(d[i]) != math.Float32bits(want) {
							t.Fatalf("%v: Arith %d (stream %v) element %d of %d = %v, want %v", l, op, stream, i, n, d[i], want)
						}
					}
				}
			}
			ExpSubTo(d, a, 0.5)
			for i := range d {
				want := float32(math.Exp(float64(a[i] - 0.5)))
				if u := int64(math.Float32bits(d[i])) - int64(math.Float32bits(want)); u > 2 || u < -2 {
					t.Fatalf("%v: ExpSubTo element %d of %d = %v, want %v", l, i, n, d[i], want)
				}
			}
			var s LNScratch
			mean, rstd := LayerNormRow(d, a, b, nil, 1e-5, &s)
			mu := sum / float64(n)
			var v float64
			for _, x := range a {
				v += (float64(x) - mu) * (float64(x) - mu)
			}
			r64 := 1 / math.Sqrt(v/float64(n)+1e-5)
			if math.Abs(float64(mean)-mu) > 1e-6 || math.Abs(float64(rstd)-r64) > 1e-6*r64 {
				t.Fatalf("%v: LayerNormRow mean, rstd = %v, %v; want %v, %v", l, mean, rstd, mu, r64)
			}
			for i, x := range a {
				want := (float64(x) - mu) * r64 * float64(b[i])
				if math.Abs(float64(d[i])-want) > 1e-6*(math.Abs(want)+1e-3) {
					t.Fatalf("%v: LayerNormRow element %d of %d = %v, want %v", l, i, n, d[i], want)
				}
			}
		}
		restore()
	}
}
