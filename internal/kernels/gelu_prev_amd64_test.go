//go:build amd64 && !purego

package kernels

import (
	"flag"
	"math"
	"slices"
	"testing"

	cpufeat "github.com/wickml/wick/internal/cpu"
)

var geluExhaustive = flag.Bool("gelu.exhaustive", false,
	"TestGELUKernelsMatchPrev sweeps all 2³² float32 inputs instead of every 251st")

// geluPrevXMax is the previous kernels' bound on x² (−2·gelu_minarg,
// float32 0x432eac50), past which they took e^(−x²/2) as 0.
const geluPrevXMax = 174.673095703125

// newlyFlushed says whether the current GELU kernels flush x and the
// previous ones did not: x in [−13.216394, −12.949953], where the previous
// kernels' Φ(x) was subnormal (positive x give the same bits either way).
func newlyFlushed(x float32) bool {
	x2 := float32(x * x)
	return x < 0 && x2 > GELUFlushX2 && x2 <= geluPrevXMax
}

// geluFlushedAs says whether cur is the flushed result for such an x, −0
// (forward: x·(+0)) or g·(+0) (derivative), and prev the tiny value of the
// previous kernel, below 2^-110·max(1, |g|) in magnitude.
func geluFlushedAs(cur, prev, g float32, grad bool) bool {
	want := uint32(1 << 31)
	if grad {
		want = math.Float32bits(g) & (1 << 31)
	}
	return math.Float32bits(cur) == want && math.Abs(float64(prev)) < 0x1p-110*max(1, math.Abs(float64(g)))
}

// TestGELUKernelsMatchPrev checks that the GELU kernels (forward, and the
// derivative with g = 1 and with g varying) give the bits of the previous
// kernels (gelu_prev_amd64.s) on every path this machine runs, but for the
// inputs that the current kernels newly flush (newlyFlushed), over every
// 251st float32 bit pattern or all of them with -gelu.exhaustive (about
// 10 minutes, most of it in the previous kernels' subnormal arithmetic).
// The kernels choose their approximations per vector (all lanes with
// |x| < √2, all with |x| ≥ √2, or both kinds): consecutive inputs mostly
// fill vectors of one kind, so each block runs a second time with two
// lanes of every 8 replaced by one input of each kind, which makes every
// vector mixed.
func TestGELUKernelsMatchPrev(t *testing.T) {
	if !hasAsm || cpufeat.Detected < cpufeat.AVX2 {
		t.Skipf("no GELU kernels to compare: this build or machine runs at most %v", cpufeat.Detected)
	}
	step := uint64(251)
	if *geluExhaustive {
		step = 1
	}
	type kernel struct {
		name      string
		cur, prev func(dst, gr, x *float32, n int)
	}
	ks := []kernel{
		{"avx2 gelu", func(d, _, x *float32, n int) { geluAVX2(d, x, n) }, func(d, _, x *float32, n int) { geluPrevAVX2(d, x, n) }},
		{"avx2 gelu'", geluGradAVX2, geluPrevGradAVX2},
	}
	if cpufeat.Detected >= cpufeat.AVX512 {
		ks = append(ks,
			kernel{"avx512 gelu", func(d, _, x *float32, n int) { geluAVX512(d, x, n) }, func(d, _, x *float32, n int) { geluPrevAVX512(d, x, n) }},
			kernel{"avx512 gelu'", geluGradAVX512, geluPrevGradAVX512})
	} else {
		t.Logf("AVX-512 kernels not compared: this machine runs at most %v", cpufeat.Detected)
	}
	const block = 1 << 14
	xs, gs := make([]float32, block), make([]float32, block)
	a, b := make([]float32, block), make([]float32, block)
	small := []float32{0.3, -1.2, 1e-30, float32(math.Copysign(0, -1)), 1.41, -0.9}
	large := []float32{-3.7, 5.5, 20, float32(math.Inf(-1)), -13, 1.4143, float32(math.NaN())}
	for _, k := range ks {
		for _, varyG := range []bool{false, true} {
			if varyG && k.name[len(k.name)-1] != '\'' {
				continue
			}
			var differ, total, flushed uint64
			for base := uint64(0); base < 1<<32; base += block * step {
				for _, mixed := range []bool{false, true} {
					n := 0
					for ; n < block && base+uint64(n)*step < 1<<32; n++ {
						bits := uint32(base + uint64(n)*step)
						xs[n] = math.Float32frombits(bits)
						gs[n] = 1
						if varyG { // g in [−2048, 2048) with 24 significant bits
							gs[n] = float32(int32(bits*2654435761)>>8) * 0x1p-12
						}
						switch {
						case mixed && n%8 == 3:
							xs[n] = small[n/8%len(small)]
						case mixed && n%8 == 6:
							xs[n] = large[n/8%len(large)]
						}
					}
					n &^= 15
					if n == 0 {
						continue
					}
					k.cur(&a[0], &gs[0], &xs[0], n)
					k.prev(&b[0], &gs[0], &xs[0], n)
					for i := range n {
						if newlyFlushed(xs[i]) {
							// the previous kernels computed Φ(x) as a
							// subnormal there; the current ones flush
							if !geluFlushedAs(a[i], b[i], gs[i], k.name[len(k.name)-1] == '\'') {
								if differ < 10 {
									t.Errorf("%s(%v) (bits %#08x, g %v, mixed vectors %v) = %v, want the flushed ±0 (previous kernel %v)", k.name, xs[i], math.Float32bits(xs[i]), gs[i], mixed, a[i], b[i])
								}
								differ++
							}
							flushed++
							continue
						}
						if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
							if differ < 10 {
								t.Errorf("%s(%v) (bits %#08x, g %v, mixed vectors %v) = %v, previous kernel %v", k.name, xs[i], math.Float32bits(xs[i]), gs[i], mixed, a[i], b[i])
							}
							differ++
						}
					}
					total += uint64(n)
				}
			}
			t.Logf("%s (g varying: %v): %d inputs, %d differ from the previous kernel (%d newly flushed)", k.name, varyG, total, differ, flushed)
		}
	}
}

// TestGELUTailMatchPrev compares the GELU kernels with the previous ones
// over every float32 x with |x| in [12, 14] (the newly flushed inputs and
// around them), in vectors of one kind and in mixed vectors, forward and
// derivative (g varying): the same bits but for the newly flushed inputs,
// which must be exactly those in [−13.216394, −12.949953].
func TestGELUTailMatchPrev(t *testing.T) {
	if !hasAsm || cpufeat.Detected < cpufeat.AVX2 {
		t.Skipf("no GELU kernels to compare: this build or machine runs at most %v", cpufeat.Detected)
	}
	type kernel struct {
		name      string
		grad      bool
		cur, prev func(dst, gr, x *float32, n int)
	}
	ks := []kernel{
		{"avx2 gelu", false, func(d, _, x *float32, n int) { geluAVX2(d, x, n) }, func(d, _, x *float32, n int) { geluPrevAVX2(d, x, n) }},
		{"avx2 gelu'", true, geluGradAVX2, geluPrevGradAVX2},
	}
	if cpufeat.Detected >= cpufeat.AVX512 {
		ks = append(ks,
			kernel{"avx512 gelu", false, func(d, _, x *float32, n int) { geluAVX512(d, x, n) }, func(d, _, x *float32, n int) { geluPrevAVX512(d, x, n) }},
			kernel{"avx512 gelu'", true, geluGradAVX512, geluPrevGradAVX512})
	} else {
		t.Logf("AVX-512 kernels not compared: this machine runs at most %v", cpufeat.Detected)
	}
	xs, gs, mx := geluTailInputs()
	n := len(xs) &^ 15 // the kernels take whole vectors
	xs, gs, mx = xs[:n], gs[:n], mx[:n]
	// −12.949953 (bits 0xc14f3302) is the first input whose Φ(x) was
	// subnormal, and −13.216394 (0xc153765a) the last that the previous
	// kernels did not flush.
	wantFlushed := uint64(0xc153765a-0xc14f3302) + 1
	a, b := make([]float32, n), make([]float32, n)
	for _, k := range ks {
		for _, x := range [][]float32{xs, mx} {
			k.cur(&a[0], &gs[0], &x[0], n)
			k.prev(&b[0], &gs[0], &x[0], n)
			var differ, flushed uint64
			for i := range n {
				ok := math.Float32bits(a[i]) == math.Float32bits(b[i])
				if newlyFlushed(x[i]) {
					ok = geluFlushedAs(a[i], b[i], gs[i], k.grad)
					flushed++
				}
				if !ok {
					if differ < 10 {
						t.Errorf("%s(%v) (bits %#08x, g %v) = %v, previous kernel %v", k.name, x[i], math.Float32bits(x[i]), gs[i], a[i], b[i])
					}
					differ++
				}
			}
			if &x[0] == &xs[0] && flushed != wantFlushed {
				t.Errorf("%s: %d inputs newly flushed, want %d", k.name, flushed, wantFlushed)
			}
			t.Logf("%s: %d inputs, %d newly flushed, %d differ", k.name, n, flushed, differ)
		}
	}
}

// geluTailInputs (as tensor's gelu_error_test.go has it) returns every float32 x with |x| in [12, 14] (positive
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
