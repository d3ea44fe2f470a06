//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/testseed"
)

// ulps returns how many float32 steps apart got and want are (0 for two
// NaNs, MaxInt64 across a sign change).
func ulps(got, want float32) int64 {
	if got != got && want != want {
		return 0
	}
	a, b := int64(math.Float32bits(got)), int64(math.Float32bits(want))
	if a < 0 != (b < 0) {
		if got == 0 && want == 0 {
			return 0
		}
		return math.MaxInt64
	}
	return max(a-b, b-a)
}

// closeF64 reports whether got is within rel of want, relative to scale.
func closeF64(got, want, scale, rel float64) bool {
	if got != got || want != want {
		return got != got && want != want
	}
	return math.Abs(got-want) <= rel*scale
}

// twinInputs returns nv vectors' worth (width lanes each) of random inputs
// for a kernel: x spread over ±8 with the specials NaN, ±Inf, ±0 and the
// GELU and exponential branch points at random places, g and p with
// positive p (probabilities) and m for the sums' means.
func twinInputs(r *rand.Rand, n int) (x, g, p []float32) {
	x, g, p = make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 4)
		g[i] = float32(r.NormFloat64())
		p[i] = r.Float32()
	}
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1.4142135, -13.2, 12.949953, -87.5, 88.5} {
		if r.IntN(3) == 0 {
			x[r.IntN(n)] = v
		}
	}
	return x, g, p
}

// widths returns the vector widths of the assembly kernels this machine
// runs: 8 (AVX2) and 16 (AVX-512).
func widths(t *testing.T) []int {
	var w []int
	if cpu.Detected >= cpu.AVX2 {
		w = append(w, 8)
	}
	if cpu.Detected >= cpu.AVX512 {
		w = append(w, 16)
	} else {
		t.Logf("AVX-512 kernels not compared: this machine runs at most %v", cpu.Detected)
	}
	if len(w) == 0 {
		t.Skipf("no assembly kernels run on this machine (detected %v)", cpu.Detected)
	}
	return w
}

// pick returns the AVX-512 kernel for width 16, else the AVX2 one.
func pick[F any](width int, k2, k512 F) F {
	if width == 16 {
		return k512
	}
	return k2
}

// TestKernelsMatchTwins checks each assembly kernel of kernels_amd64.s,
// at each width this machine runs, against its Go twin (generic.go) on
// fresh random inputs with specials, within the bound that its doc comment
// states: bit for bit where the kernel does the twin's operations in its
// order; within maxULP where it approximates the twin's function (the GELU
// polynomials choose their branch per vector, exp works in float32, tanh
// and sigmoid round a float64 value of their own, e^(x−m) fuses Exp32's
// polynomial); within a relative 1e-12 of the sum of magnitudes for
// float64 sums in lanes, n·2⁻²⁴ for the float32 sum of n exponentials.
func TestKernelsMatchTwins(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 3))
	for _, w := range widths(t) {
		for trial := range 40 {
			n := w * (1 + r.IntN(24))
			x, g, p := twinInputs(r, n)
			name := func(k string) string { return fmt.Sprintf("%s (width %d, n %d, trial %d)", k, w, n, trial) }

			// elementwise kernels of one or two inputs, with their ulp bounds
			type unary struct {
				name   string
				k      func(dst, x *float32, n int)
				twin   func(dst, x []float32)
				maxULP int64
				rel    float64 // or within rel of the twin's value
			}
			for _, u := range []unary{
				// the GELU kernels and GELU32 are each within 3e-7 of
				// the float64 GELU (relative), with branches per vector
				// and per element
				{"gelu", pick(w, geluAVX2, geluAVX512), geluGo, 4, 1e-6},
				{"exp", pick(w, expAVX2, expAVX512), expGo, 1, 0},
				{"tanh", pick(w, tanhAVX2, tanhAVX512), tanhGo, 1, 0},
				{"sigmoid", pick(w, sigmoidAVX2, sigmoidAVX512), sigmoidGo, 1, 0},
			} {
				got, want := make([]float32, n), make([]float32, n)
				u.k(&got[0], &x[0], n)
				u.twin(want, x)
				for i := range got {
					if d := ulps(got[i], want[i]); d > u.maxULP && !(math.Abs(float64(got[i]-want[i])) <= u.rel*math.Abs(float64(want[i]))) {
						t.Fatalf("%s(%v) = %v, Go twin %v (%d ulp, want ≤ %d)", name(u.name), x[i], got[i], want[i], d, u.maxULP)
					}
				}
			}
			{
				got, want := make([]float32, n), make([]float32, n)
				pick(w, geluGradAVX2, geluGradAVX512)(&got[0], &g[0], &x[0], n)
				geluGradGo(want, g, x)
				for i := range got {
					// g·(Φ + x·φ) cancels near x = −0.75: bound the
					// difference by the size of the terms
					cdf, pdf := NormCDFPDF(x[i])
					scale := math.Abs(float64(g[i])) * (float64(cdf) + math.Abs(float64(x[i]*pdf)))
					if d := ulps(got[i], want[i]); d > 4 && !(math.Abs(float64(got[i]-want[i])) <= 1e-6*scale) {
						t.Fatalf("%s(%v, g %v) = %v, Go twin %v (%d ulp)", name("geluGrad"), x[i], g[i], got[i], want[i], d)
					}
				}
			}

			// kernels that do the twin's float32 operations in its order:
			// the same bits
			exact := func(k string, got, want []float32) {
				t.Helper()
				for i := range got {
					if ulps(got[i], want[i]) != 0 {
						t.Fatalf("%s: element %d = %v, Go twin %v", name(k), i, got[i], want[i])
					}
				}
			}
			ops := []ArithOp{Add, Sub, Mul, Div}
			for oi, k := range [][2]func(d, a, b *float32, n int){
				{addAVX2, addAVX512}, {subAVX2, subAVX512}, {mulAVX2, mulAVX512}, {divAVX2, divAVX512},
				{addNTAVX2, addNTAVX512}, {subNTAVX2, subNTAVX512}, {mulNTAVX2, mulNTAVX512}, {divNTAVX2, divNTAVX512},
			} {
				// the non-temporal kernels need d aligned to the vector:
				// take d from an offset that makes it so
				buf := make([]float32, n+16)
				off := 0
				for uintptr(addr(&buf[off]))%uintptr(4*w) != 0 {
					off++
				}
				got, want := buf[off:off+n], make([]float32, n)
				pick(w, k[0], k[1])(&got[0], &x[0], &g[0], n)
				arithGo(ops[oi%4], want, x, g)
				exact(fmt.Sprintf("arith %d", oi), got, want)
			}
			{
				got, want := append([]float32(nil), x...), append([]float32(nil), x...)
				pick(w, scaleAVX2, scaleAVX512)(&got[0], n, 1.7)
				scaleGo(want, 1.7)
				exact("scale", got, want)

				got, want = make([]float32, n), make([]float32, n)
				pick(w, logSoftmaxAVX2, logSoftmaxAVX512)(&got[0], &x[0], n, 0.5, 2.25)
				logSoftmaxGo(want, x, 0.5, 2.25)
				exact("logSoftmax", got, want)

				pick(w, softmaxGradAVX2, softmaxGradAVX512)(&got[0], &p[0], &g[0], n, 0.3)
				softmaxGradGo(want, p, g, 0.3)
				exact("softmaxGrad", got, want)

				copy(got, p)
				copy(want, p)
				pick(w, logSoftmaxGradAVX2, logSoftmaxGradAVX512)(&got[0], &g[0], n, 0.3)
				logSoftmaxGradGo(want, g, 0.3)
				exact("logSoftmaxGrad", got, want)

				gm, wm := pick(w, maxAVX2, maxAVX512)(&x[0], n), maxGo(x)
				if ulps(gm, wm) != 0 {
					t.Fatalf("%s = %v, Go twin %v", name("max"), gm, wm)
				}
			}
			{
				c := &AdamWConsts{B1: 0.9, A1: 0.1, B2: 0.95, A2: 0.05, BC2Sqrt: 0.3, Eps: 1e-8, StepSize: 1e-3, Decay: 0.999}
				mk := func() (pp, gg, m, v []float32) {
					pp, gg, m, v = append([]float32(nil), p...), append([]float32(nil), g...), make([]float32, n), make([]float32, n)
					for i := range m {
						m[i], v[i] = g[i]*0.01, p[i]*p[i]*0.01
					}
					return
				}
				p1, g1, m1, v1 := mk()
				p2, g2, m2, v2 := mk()
				pick(w, adamwAVX2, adamwAVX512)(&p1[0], &g1[0], &m1[0], &v1[0], n, c)
				adamwGo(p2, g2, m2, v2, c)
				exact("adamw p", p1, p2)
				exact("adamw m", m1, m2)
				exact("adamw v", v1, v2)
			}

			// float64 row kernels: sums in lanes against one chain; the
			// elementwise ones (lnNorm, lnGradDx) in float64 with FMA
			// contraction, within 1 ulp of float32
			fin := append([]float32(nil), g...) // finite inputs
			var mag float64
			for _, v := range fin {
				mag += math.Abs(float64(v))
			}
			mu, rr := 0.1, 1.3
			sum := func(k string, got, want, scale float64) {
				t.Helper()
				if !closeF64(got, want, scale, 1e-12) {
					t.Fatalf("%s = %v, Go twin %v", name(k), got, want)
				}
			}
			sum("sumF64", pick(w, sumF64AVX2, sumF64AVX512)(&fin[0], n), sumF64Go(fin), mag)
			sum("dotF64", pick(w, dotF64AVX2, dotF64AVX512)(&fin[0], &p[0], n), dotF64Go(fin, p), mag)
			sum("lnSqDev", pick(w, lnSqDevAVX2, lnSqDevAVX512)(&fin[0], n, mu), lnSqDevGo(fin, mu), mag*mag)
			{
				aw1, ab1, aw2, ab2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
				a1, b1 := pick(w, lnGradSumsAVX2, lnGradSumsAVX512)(&g[0], &fin[0], &p[0], n, mu, rr, &aw1[0], &ab1[0])
				a2, b2 := lnGradSumsGo(g, fin, p, mu, rr, aw2, ab2)
				sum("lnGradSums s1", a1, a2, mag)
				sum("lnGradSums s2", b1, b2, mag*mag*rr)
				for i := range aw1 {
					sum("lnGradSums accW", aw1[i], aw2[i], math.Abs(float64(g[i]))*(math.Abs(float64(fin[i]))+1)*rr)
					sum("lnGradSums accB", ab1[i], ab2[i], math.Abs(float64(g[i])))
				}
				ulp1 := func(k string, got, want []float32) {
					t.Helper()
					for i := range got {
						if ulps(got[i], want[i]) > 1 {
							t.Fatalf("%s: element %d = %v, Go twin %v", name(k), i, got[i], want[i])
						}
					}
				}
				got, want := make([]float32, n), make([]float32, n)
				pick(w, lnNormAVX2, lnNormAVX512)(&got[0], &fin[0], &p[0], &x[0], n, mu, rr)
				lnNormGo(want, fin, p, x, mu, rr)
				ulp1("lnNorm", got, want)
				pick(w, lnNormAVX2, lnNormAVX512)(&got[0], &fin[0], &p[0], nil, n, mu, rr)
				lnNormGo(want, fin, p, nil, mu, rr)
				ulp1("lnNorm without bias", got, want)
				pick(w, lnGradDxAVX2, lnGradDxAVX512)(&got[0], &g[0], &fin[0], &p[0], n, mu, rr, a2/float64(n), b2/float64(n))
				lnGradDxGo(want, g, fin, p, mu, rr, a2/float64(n), b2/float64(n))
				ulp1("lnGradDx", got, want)
			}

			// e^(x − m) and its float32 sum in lanes
			{
				xs := make([]float32, n)
				for i := range xs {
					xs[i] = float32(r.NormFloat64() * 3)
				}
				got, want := make([]float32, n), make([]float32, n)
				sg := pick(w, expSubToAVX2, expSubToAVX512)(&got[0], &xs[0], n, 1.5)
				sw := expSubToGo(want, xs, 1.5)
				for i := range got { // the kernel's polynomial is fused (FMA)
					if d := ulps(got[i], want[i]); d > 2 {
						t.Fatalf("%s: element %d = %v, Go twin %v (%d ulp)", name("expSubTo"), i, got[i], want[i], d)
					}
				}
				// positive terms: the two orders differ by at most n·u
				if !closeF64(float64(sg), float64(sw), float64(sw), float64(n)*0x1p-24) {
					t.Fatalf("%s: sum %v, Go twin %v", name("expSubTo"), sg, sw)
				}
			}
		}
	}
}

// TestAttentionRowKernels holds the one-call row kernels of attention
// (softmaxScaledAVX2, softmaxGradRowAVX2) to the AVX2 kernels they fuse,
// called in turn as SoftmaxScaled and SoftmaxGradScaled call them for rows
// of other lengths, bit for bit: fresh random rows of 8 to 200 elements
// with, in some, -Inf (masked positions), +Inf, NaN, maxima beyond 3.4e38
// and rows wholly -Inf.
func TestAttentionRowKernels(t *testing.T) {
	if cpu.Detected < cpu.AVX2 {
		t.Skipf("no AVX2 kernels on this machine (detected %v)", cpu.Detected)
	}
	defer SetLevel(cpu.AVX2)()
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 2))
	inf := float32(math.Inf(1))
	special := []float32{-inf, inf, float32(math.NaN()), 3.39e38, -3.4001e38, 3.4028235e38}
	same := func(a, b []float32) bool {
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
				return false
			}
		}
		return true
	}
	for trial := range 2000 {
		n := 8 * (1 + r.IntN(25))
		x, d, p := make([]float32, n), make([]float32, n), make([]float32, n)
		k := float32(math.Exp(r.NormFloat64() * 2))
		for i := range x {
			x[i], d[i] = float32(r.NormFloat64())*k, float32(r.NormFloat64())
			p[i] = r.Float32()
		}
		switch trial % 8 {
		case 1, 2: // a masked tail, as a causal row padded
			for i := n - 1 - r.IntN(8); i < n; i++ {
				x[i], p[i] = -inf, 0
			}
		case 3:
			x[r.IntN(n)] = special[r.IntN(len(special))]
			d[r.IntN(n)] = special[r.IntN(len(special))]
		case 4:
			for i := range x {
				x[i] = -inf
			}
		}
		scale := float32(r.Float64() + 0.05)

		want := slices.Clone(x)
		Scale(want, scale)
		m := Max(want)
		if m != m || m > 3.4e38 || m < -3.4e38 {
			m = 0
		}
		Scale(want, 1/ExpSub(want, m))
		got := slices.Clone(x)
		softmaxScaledAVX2(&got[0], n, scale)
		if !same(got, want) {
			t.Fatalf("softmaxScaledAVX2(%v, scale %v) = %v, the AVX2 kernels in turn give %v", x, scale, got, want)
		}

		wantD := slices.Clone(d)
		SoftmaxGradOut(wantD, p, wantD, float32(DotF64(wantD, p)))
		Scale(wantD, scale)
		gotD := slices.Clone(d)
		softmaxGradRowAVX2(&gotD[0], &p[0], n, scale)
		if !same(gotD, wantD) {
			t.Fatalf("softmaxGradRowAVX2(%v, %v, scale %v) = %v, the AVX2 kernels in turn give %v", d, p, scale, gotD, wantD)
		}
	}
}

// TestFusedRowKernelsMatchTwins checks softmaxScaledAVX2 and
// softmaxGradRowAVX2 against their Go compositions (generic.go): the same
// float32 operations but for the exponentials (a fused polynomial in the
// kernel, within 2 ulp of Exp32) and the sums, taken in lanes by the
// kernel, so within 1e-6 relative.
func TestFusedRowKernelsMatchTwins(t *testing.T) {
	if cpu.Detected < cpu.AVX2 {
		t.Skipf("no AVX2 kernels on this machine (detected %v)", cpu.Detected)
	}
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 4))
	for range 200 {
		n := 8 * (1 + r.IntN(25))
		x, g, p := twinInputs(r, n)
		for i := range x { // finite rows: the specials are TestAttentionRowKernels'
			x[i] = float32(r.NormFloat64() * 3)
		}
		got, want := append([]float32(nil), x...), append([]float32(nil), x...)
		softmaxScaledAVX2(&got[0], n, 0.7)
		softmaxScaledGo(want, 0.7)
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-6*math.Abs(float64(want[i])) {
				t.Fatalf("softmaxScaledAVX2: element %d of %d = %v, Go twin %v", i, n, got[i], want[i])
			}
		}
		got, want = append([]float32(nil), g...), append([]float32(nil), g...)
		softmaxGradRowAVX2(&got[0], &p[0], n, 0.7)
		softmaxGradRowGo(want, p, 0.7)
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-6*(math.Abs(float64(want[i]))+1e-3) {
				t.Fatalf("softmaxGradRowAVX2: element %d of %d = %v, Go twin %v", i, n, got[i], want[i])
			}
		}
	}
}

// addr is p's address, for alignment.
func addr(p *float32) uintptr { return uintptr(unsafe.Pointer(p)) }
