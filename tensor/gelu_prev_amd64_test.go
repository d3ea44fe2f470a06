//go:build amd64 && !purego

package tensor

import (
	"flag"
	"math"
	"testing"

	cpufeat "github.com/wickml/wick/internal/cpu"
)

var geluExhaustive = flag.Bool("gelu.exhaustive", false,
	"TestGELUKernelsMatchPrev sweeps all 2³² float32 inputs instead of every 251st")

// TestGELUKernelsMatchPrev checks that the GELU kernels (forward, and the
// derivative with g = 1 and with g varying) give the bits of the previous
// kernels (gelu_prev_amd64.s) on every path this machine runs, over every
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
			var differ, total uint64
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
			t.Logf("%s (g varying: %v): %d inputs, %d differ from the previous kernel", k.name, varyG, total, differ)
		}
	}
}
