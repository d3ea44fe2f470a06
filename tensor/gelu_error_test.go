package tensor

import (
	"flag"
	"math"
	"slices"
	"testing"
)

var geluErrAll = flag.Bool("gelu.errall", false,
	"TestGELUErrorBound sweeps all 2³² float32 inputs instead of every 251st")

// orderedBits maps float32 bit patterns onto integers in the order of the
// values (−0 and +0 both to 0), so that a difference counts float32 steps.
func orderedBits(f float32) int64 {
	b := int64(math.Float32bits(f))
	if b >= 1<<31 {
		return -(b - 1<<31)
	}
	return b
}

// geluErrRegions are the ranges of x of TestGELUErrorBound, each with the
// most float32 steps that the forward kernels may be from the correctly
// rounded x·Φ(x): at or a little above the worst over all 2³² inputs
// (-gelu.errall, 2026-12-01: 24, 8, 17 and 3 steps on AVX2 and AVX-512;
// 23, 8, 18 and 2 on the Go path). The erf branch's 1/2 − z·A(z²)/2
// cancels for x in [−√2, −0.5]; the tail loses accuracy as Φ(x) nears
// float32's subnormal range.
var geluErrRegions = []struct {
	lo      float64
	maxULPs int64
}{
	{math.Inf(-1), 26},
	{-10, 16},
	{-math.Sqrt2, 19},
	{-0.5, 3},
}

// geluGradMaxErr bounds the derivative's error (g = 1) in units of 2^-24 of
// |Φ(x)| + |x·φ(x)|, its terms, since the sum cancels near x = −0.75 (the
// worst over all inputs: 6.32 on AVX2 and AVX-512, 6.37 on the Go path,
// near x = −√2).
const geluGradMaxErr = 6.5

// TestGELUErrorBound measures the GELU kernels of each path against
// float64 formulas accurate in the tails (Φ(x) = erfc(−x/√2)/2, not the
// op table's 1 + erf, which cancels there) wherever Φ(x) is a normal
// float32 (x ≥ −12.949952), over every 251st float32 bit pattern or all of
// them with -gelu.errall, and fails past the bounds above. Below, where
// Φ(x) < 2^-126, the kernels flush by design (kernels.GELUFlushX2): it wants
// GELU(x) = −0 and GELU'(x) = +0 there.
func TestGELUErrorBound(t *testing.T) {
	step := uint64(251)
	if *geluErrAll {
		step = 1
	}
	const block = 1 << 14
	xs, gs := make([]float32, block), make([]float32, block)
	y, dy := make([]float32, block), make([]float32, block)
	for i := range gs {
		gs[i] = 1
	}
	forEachPath(t, func(asm string) {
		worst := make([]int64, len(geluErrRegions))
		worstX := make([]float32, len(geluErrRegions))
		var worstGrad float64
		var worstGradX float32
		flushErrs := 0
		for base := uint64(0); base < 1<<32; base += block * step {
			n := 0
			for k := 0; k < block && base+uint64(k)*step < 1<<32; k++ {
				x := math.Float32frombits(uint32(base + uint64(k)*step))
				if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
					xs[n] = x
					n++
				}
			}
			geluF32(y[:n], xs[:n])
			geluGradF32(dy[:n], gs[:n], xs[:n])
			for i, x := range xs[:n] {
				v := float64(x)
				cdf := 0.5 * math.Erfc(-v/math.Sqrt2)
				if cdf < 0x1p-126 {
					if (math.Float32bits(y[i]) != 1<<31 || math.Float32bits(dy[i]) != 0) && flushErrs < 10 {
						flushErrs++
						t.Errorf("%s: GELU(%v) = %v, GELU'(%v) = %v; want the flushed −0 and 0 where Φ(x) < 2^-126", asm, x, y[i], x, dy[i])
					}
					continue
				}
				r := len(geluErrRegions) - 1
				for v < geluErrRegions[r].lo {
					r--
				}
				u := orderedBits(y[i]) - orderedBits(float32(v*cdf))
				if u = max(u, -u); u > worst[r] {
					worst[r], worstX[r] = u, x
				}
				pdf := math.Exp(-0.5*v*v) / math.Sqrt(2*math.Pi)
				e := math.Abs(float64(dy[i])-(cdf+v*pdf)) / (cdf + math.Abs(v*pdf)) * 0x1p24
				if e > worstGrad {
					worstGrad, worstGradX = e, x
				}
			}
		}
		for r, reg := range geluErrRegions {
			t.Logf("%s: x ≥ %.4g: GELU worst %d float32 steps (x = %v)", asm, reg.lo, worst[r], worstX[r])
			if worst[r] > reg.maxULPs {
				t.Errorf("%s: GELU(%v) is %d float32 steps from the correctly rounded value, want at most %d", asm, worstX[r], worst[r], reg.maxULPs)
			}
		}
		t.Logf("%s: GELU' worst %.3g·2^-24 of |Φ|+|xφ| (x = %v)", asm, worstGrad, worstGradX)
		if worstGrad > geluGradMaxErr {
			t.Errorf("%s: GELU'(%v) is off by %.3g·2^-24 of |Φ|+|xφ|, want at most %g", asm, worstGradX, worstGrad, geluGradMaxErr)
		}
	})
}

// TestGELUTailFlush runs every float32 x with |x| in [12, 14] through the
// GELU kernels of each path, in vectors of one kind and in vectors with an
// erf lane, forward and derivative (g varying): GELU(x) = −0 and GELU'(x)
// = g·(+0) for x ≤ −12.949953 (bits 0xc14f3302), where Φ(x) would be
// subnormal; above, up to −12, |GELU(x)| ≥ |x|·2^-126, that is a normal
// Φ(x); for positive x, GELU(x) = x and GELU'(x) = g, as before the flush.
func TestGELUTailFlush(t *testing.T) {
	xs, gs, mx := geluTailInputs()
	n := len(xs)
	y, dy := make([]float32, n), make([]float32, n)
	const first = 0xc14f3302 // −12.949953, the first flushed input
	forEachPath(t, func(asm string) {
		for _, x := range [][]float32{xs, mx} {
			geluF32(y, x)
			geluGradF32(dy, gs, x)
			bad, flushed := 0, 0
			for i, v := range x {
				if v == 0.3 {
					continue
				}
				b := math.Float32bits(v)
				var ok bool
				switch {
				case v > 0:
					ok = y[i] == v && math.Float32bits(dy[i]) == math.Float32bits(gs[i])
				case b >= first:
					flushed++
					ok = math.Float32bits(y[i]) == 1<<31 && math.Float32bits(dy[i]) == math.Float32bits(gs[i])&(1<<31)
				default:
					ok = -y[i] >= -v*0x1p-126 && dy[i] != 0
				}
				if !ok && bad < 10 {
					bad++
					t.Errorf("%s: GELU(%v) (bits %#08x) = %v, GELU'·%v = %v", asm, v, b, y[i], gs[i], dy[i])
				}
			}
			if want := int(math.Float32bits(-14) - first + 1); flushed != want && &x[0] == &xs[0] {
				t.Errorf("%s: %d inputs flushed, want %d", asm, flushed, want)
			}
		}
	})
}

// geluTailInputs returns every float32 x with |x| in [12, 14] (positive
// then negative), a varied incoming gradient for each, and a copy of xs
// with every eighth element replaced by 0.3, an erf lane, so that every
// vector of 8 or 16 takes the kernels' mixed path.
func geluTailInputs() (xs, gs, mx []float32) {
	for _, sign := range []float32{1, -1} {
		for b := math.Float32bits(12); b <= math.Float32bits(14); b++ {
			xs = append(xs, sign*math.Float32frombits(b))
		}
	}
	n := len(xs)
	gs = make([]float32, n)
	for i := range gs {
		gs[i] = float32(int32(uint32(i)*2654435761)>>8) * 0x1p-12
	}
	mx = slices.Clone(xs)
	for i := 3; i < n; i += 8 {
		mx[i] = 0.3
	}
	return xs, gs, mx
}
