package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/internal/approx"
	cpufeat "github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/cputime"
	"github.com/wickml/wick/internal/kernels"
)

// ulps returns how many float32 steps apart got and want are.
func ulps(got, want float32) int64 {
	a, b := int64(math.Float32bits(got)), int64(math.Float32bits(want))
	if a < 0 != (b < 0) {
		return math.MaxInt64
	}
	d := a - b
	if d < 0 {
		d = -d
	}
	return d
}

// geluF32 writes x·Φ(x) (exact GELU) of each element of src into dst: the
// GELU row's dense path (unary_ops.go), the vector kernels, then Go.
func geluF32(dst, src []float32) { unaryOps[OpGELU].dense(dst, src, UnaryParams{}) }

// geluGradF32 writes g·(Φ(x) + x·φ(x)) into dst, as geluF32 does.
func geluGradF32(dst, g, x []float32) { unaryOps[OpGELU].denseGrad(dst, g, x, x, UnaryParams{}) }

// geluTanhF32 writes GELU's tanh approximation of each element of src
// into dst.
func geluTanhF32(dst, src []float32) { unaryOps[OpGELUTanh].dense(dst, src, UnaryParams{}) }

// geluTanhGradF32 writes g·GELUTanh′(x) into dst.
func geluTanhGradF32(dst, g, x []float32) {
	unaryOps[OpGELUTanh].denseGrad(dst, g, x, x, UnaryParams{})
}

// kernelPaths names the kernel paths that this build and machine run: "go"
// (the Go fallbacks), "avx2" and "avx512" where the processor and OS
// support them (whatever WICK_CPU asks for).
func kernelPaths() []string {
	paths := []string{"go"}
	if kernels.HasAsm {
		if cpufeat.Detected >= cpufeat.AVX2 {
			paths = append(paths, "avx2")
		}
		if cpufeat.Detected >= cpufeat.AVX512 {
			paths = append(paths, "avx512")
		}
	}
	return paths
}

// setKernelPath switches the kernels to path (see kernelPaths) and returns
// a function that restores the previous choice. t must be exclusive (see
// exclusive).
func setKernelPath(t testing.TB, path string) (restore func()) {
	t.Helper()
	exclusive(t)
	l := cpufeat.Generic
	switch path {
	case "avx2":
		l = cpufeat.AVX2
	case "avx512":
		l = cpufeat.AVX512
	}
	return kernels.SetLevel(l)
}

// forEachPath runs f on each of kernelPaths, restoring the kernel choice
// after; paths the machine lacks are skipped with a logged reason.
func forEachPath(t *testing.T, f func(asm string)) {
	t.Helper()
	exclusive(t)
	paths := kernelPaths()
	if len(paths) < 3 {
		t.Logf("testing the kernel paths %v only: this build or machine runs no others (detected %v)", paths, cpufeat.Detected)
	}
	for _, p := range paths {
		restore := setKernelPath(t, p)
		f(p)
		restore()
	}
}

func TestExp32(t *testing.T) {
	worst := int64(0)
	for x := float32(-87.3); x < 88.7; x += 0.00731 {
		want := float32(math.Exp(float64(x)))
		if u := ulps(kernels.Exp32(x), want); u > worst {
			worst = u
			if u > 2 {
				t.Fatalf("kernels.Exp32(%v) = %v, want %v (%d ulp)", x, kernels.Exp32(x), want, u)
			}
		}
	}
	t.Logf("kernels.Exp32: worst %d ulp", worst)
	for _, x := range []float32{-100, -88, -1e30, float32(math.Inf(-1))} {
		if got, want := kernels.Exp32(x), float32(math.Exp(float64(x))); got != want {
			t.Errorf("kernels.Exp32(%v) = %v, want %v", x, got, want)
		}
	}
	if got := kernels.Exp32(89); !math.IsInf(float64(got), 1) {
		t.Errorf("kernels.Exp32(89) = %v, want +Inf", got)
	}
	if got := kernels.Exp32(float32(math.NaN())); got == got {
		t.Errorf("kernels.Exp32(NaN) = %v, want NaN", got)
	}
}

func TestNormCDFPDF(t *testing.T) {
	for x := float32(-12); x < 12; x += 0.000913 {
		v := float64(x)
		cdf := 0.5 * math.Erfc(-v/math.Sqrt2)
		pdf := math.Exp(-0.5*v*v) / math.Sqrt(2*math.Pi)
		gc, gp := kernels.NormCDFPDF(x)
		if d := math.Abs(float64(gc)-cdf) / cdf; d > 1e-6 && cdf > 1e-30 {
			t.Fatalf("Φ(%v) = %v, want %v (rel %g)", x, gc, cdf, d)
		}
		if d := math.Abs(float64(gp)-pdf) / pdf; d > 1e-6 && pdf > 1e-30 {
			t.Fatalf("φ(%v) = %v, want %v (rel %g)", x, gp, pdf, d)
		}
	}
}

// TestGELUFastMatchesReference compares the fast GELU kernels with the
// float64 reference formulas of unaryFunc and unaryGradFunc.
func TestGELUFastMatchesReference(t *testing.T) {
	forEachPath(t, func(asm string) {
		t.Run(asm, testGELUFast)
	})
}

func testGELUFast(t *testing.T) {
	ref := unaryFunc(OpGELU, UnaryParams{})
	refGrad := unaryGradFunc(OpGELU, UnaryParams{})
	inf := float32(math.Inf(1))
	// the special values both at the start (assembly lanes) and at the
	// end (the Go tail, when the length is not a multiple of 8)
	xs := []float32{0, inf, -inf, float32(math.NaN()), -88, 88, -1e-30, 1e30}
	gs := []float32{1, 1, 1, 1, 1, 1, 1, 1}
	for x := float32(-10); x < 10; x += 0.00377 {
		xs = append(xs, x)
		gs = append(gs, 1.5-x/7)
	}
	xs = append(xs, 0, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	gs = append(gs, 1, 1, 1, 1)
	y := make([]float32, len(xs))
	dx := make([]float32, len(xs))
	geluF32(y, xs)
	geluGradF32(dx, gs, xs)
	close := func(got, want float32) bool { return approx.Scalar(float64(got), float64(want), 1e-6, 1e-7) }
	for i, x := range xs {
		if w := ref(x); !close(y[i], w) || !close(kernels.GELU32(x), w) {
			t.Fatalf("GELU(%v) = %v, want %v", x, y[i], w)
		}
		if w := refGrad(gs[i], x, y[i]); !close(dx[i], w) {
			t.Fatalf("GELU'(%v)·%v = %v, want %v", x, gs[i], dx[i], w)
		}
	}
}

// TestGELUTanhFastMatchesReference checks the float32 tanh-GELU kernels
// against the float64 formulas of unary_ops.go, over a fine grid,
// the tails where the logistic factor saturates, and special values.
func TestGELUTanhFastMatchesReference(t *testing.T) {
	ref := unaryFunc(OpGELUTanh, UnaryParams{})
	refGrad := unaryGradFunc(OpGELUTanh, UnaryParams{})
	inf := float32(math.Inf(1))
	xs := []float32{0, float32(math.Copysign(0, -1)), inf, -inf, float32(math.NaN()), -88, 88, -9.3, -9.5, 9.3, 9.5, -1e-30, 1e-30, 1e30, -1e30, -3e19, 3e19}
	for x := float32(-12); x < 12; x += 0.00377 {
		xs = append(xs, x)
	}
	close := func(got, want float32) bool { return approx.Scalar(float64(got), float64(want), 1e-6, 1e-7) }
	y := make([]float32, len(xs))
	geluTanhF32(y, xs)
	gs := make([]float32, len(xs))
	for i, x := range xs {
		gs[i] = 1.5 - x/7
		if x-x != 0 || math.Abs(float64(x)) > 100 {
			gs[i] = 1
		}
	}
	dx := make([]float32, len(xs))
	geluTanhGradF32(dx, gs, xs)
	for i, x := range xs {
		if w := ref(x); !close(y[i], w) || !close(kernels.GELUTanh32(x), w) {
			t.Fatalf("GELUTanh(%v) = %v, want %v", x, y[i], w)
		}
		if w := refGrad(gs[i], x, y[i]); !close(dx[i], w) {
			t.Fatalf("GELUTanh'(%v)·%v = %v, want %v", x, gs[i], dx[i], w)
		}
	}
	if got := kernels.GELUTanh32(-20); math.Float32bits(got) != math.Float32bits(float32(math.Copysign(0, -1))) {
		t.Errorf("GELUTanh(-20) = %v, want -0 like the reference", got)
	}
}

// benchGELURows times f over 64K inputs spread over [−5, 5), reporting
// the CPU time per call beside the wall time.
func benchGELURows(b *testing.B, f func(y, xs []float32)) {
	NoPoison(b)
	xs := make([]float32, 1<<16)
	for i := range xs {
		xs[i] = float32(i%2000)/200 - 5
	}
	y := make([]float32, len(xs))
	b.SetBytes(int64(4 * len(xs)))
	c0 := cputime.Process()
	for b.Loop() {
		f(y, xs)
	}
	cputime.ReportPerOp(b, c0)
}

// perElement is the unary op's reference applied element by element.
func perElement(op UnaryOp) func(y, xs []float32) {
	f := unaryFunc(op, UnaryParams{})
	return func(y, xs []float32) {
		for i, x := range xs {
			y[i] = f(x)
		}
	}
}

func BenchmarkGELUFast(b *testing.B)      { benchGELURows(b, geluF32) }
func BenchmarkGELUReference(b *testing.B) { benchGELURows(b, perElement(OpGELU)) }

// BenchmarkGELUGradFast times the derivative's kernels over the inputs of
// BenchmarkGELUFast, with an incoming gradient of 1.
func BenchmarkGELUGradFast(b *testing.B) {
	var g []float32
	benchGELURows(b, func(y, xs []float32) {
		if g == nil {
			g = make([]float32, len(xs))
			for i := range g {
				g[i] = 1
			}
		}
		geluGradF32(y, g, xs)
	})
}

func TestExpSub(t *testing.T) {
	forEachPath(t, func(asm string) {
		for _, n := range []int{1, 7, 8, 9, 16, 24, 31, 64, 203} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i%17)*5.5 - 90 // down into the underflow range
			}
			x[0] = float32(math.NaN())
			if n > 3 {
				x[3] = float32(math.Inf(-1))
			}
			want := make([]float32, n)
			for i, v := range x {
				want[i] = float32(math.Exp(float64(v - 2.5)))
			}
			sum := kernels.ExpSub(x, 2.5)
			for i := range x {
				if i == 0 {
					if x[0] == x[0] {
						t.Fatalf("asm=%v n=%d: e^NaN = %v", asm, n, x[0])
					}
					continue
				}
				if !approx.Scalar(float64(x[i]), float64(want[i]), 2e-7, 1e-37) {
					t.Fatalf("asm=%v n=%d: element %d (arg %v) = %v, want %v", asm, n, i, -2.5+float64(i%17)*5.5-90, x[i], want[i])
				}
			}
			if sum == sum {
				t.Errorf("asm=%v n=%d: sum with a NaN = %v", asm, n, sum)
			}
			// without the NaN the sum is that of the elements
			y := make([]float32, n)
			for i := range y {
				y[i] = float32(i%13) - 6
			}
			var ysum float64
			for _, v := range y {
				ysum += math.Exp(float64(v - 2.5))
			}
			if got := kernels.ExpSub(y, 2.5); !approx.Scalar(float64(got), ysum, 1e-6, 0) {
				t.Errorf("asm=%v n=%d: sum %v, want %v", asm, n, got, ysum)
			}
		}
	})
}

// TestAdamWFastBitExact checks that the fast AdamW loop (assembly and Go
// tail) gives the reference loop's results bit for bit.
func TestAdamWFastBitExact(t *testing.T) {
	exclusive(t)
	defer func(f bool) { adamwFast = f }(adamwFast)
	defer kernels.SetLevel(kernels.Level())()
	g := NewGenerator(5)
	const n = 1000 + 13 // ragged tails after the 16- and 8-lane blocks
	mk := func(scale float64, pos bool) []float32 {
		x := make([]float32, n)
		for i := range x {
			v := g.NormFloat64() * scale
			if pos {
				v = v * v
			}
			x[i] = float32(v)
		}
		return x
	}
	p0, g0, m0, v0 := mk(1, false), mk(0.1, false), mk(0.01, false), mk(0.01, true)
	run := func(path string, fast bool) [3][]float32 {
		setKernelPath(t, path)
		adamwFast = fast
		p, m, v := append([]float32(nil), p0...), append([]float32(nil), m0...), append([]float32(nil), v0...)
		for step := 1; step <= 3; step++ {
			cpu.AdamW(&cpuStorage{f: p}, &cpuStorage{f: g0}, &cpuStorage{f: m}, &cpuStorage{f: v}, n,
				AdamWStep{LR: 1e-3, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1, Step: step})
		}
		return [3][]float32{p, m, v}
	}
	want := run("go", false)
	for _, asm := range kernelPaths() {
		got := run(asm, true)
		for k := range got {
			for i := range got[k] {
				if math.Float32bits(got[k][i]) != math.Float32bits(want[k][i]) {
					t.Fatalf("asm=%v: tensor %d element %d = %v, reference %v", asm, k, i, got[k][i], want[k][i])
				}
			}
		}
	}
}

// TestLayerNormGradFast compares the fast LayerNorm forward (with and
// without weight and bias) and the one-sweep backward with the reference
// kernels, on ragged shapes and rows whose mean is much larger than their
// spread.
func TestLayerNormGradFast(t *testing.T) {
	exclusive(t)
	defer func(f bool) { layerNormFast = f }(layerNormFast)
	gen := NewGenerator(9)
	for _, s := range []struct{ rows, cols int }{{1, 1}, {3, 7}, {700, 130}, {5000, 33}} {
		mk := func(n int, off float64) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(gen.NormFloat64() + off)
			}
			return x
		}
		n := s.rows * s.cols
		x, g, w := mk(n, 100), mk(n, 0), mk(s.cols, 1)
		b := mk(s.cols, 0)
		forward := func(fast bool, w, b Storage) (y, mean, rstd []float32) {
			layerNormFast = fast
			y, mean, rstd = make([]float32, n), make([]float32, s.rows), make([]float32, s.rows)
			cpu.LayerNorm(&cpuStorage{f: y}, &cpuStorage{f: mean}, &cpuStorage{f: rstd}, &cpuStorage{f: x}, w, b, s.rows, s.cols, 1e-5)
			return y, mean, rstd
		}
		for _, affine := range [][2]Storage{{nil, nil}, {&cpuStorage{f: w}, nil}, {nil, &cpuStorage{f: b}}, {&cpuStorage{f: w}, &cpuStorage{f: b}}} {
			wy, wm, wr := forward(false, affine[0], affine[1])
			gy, gm, gr := forward(true, affine[0], affine[1])
			for k, pair := range [][2][]float32{{gy, wy}, {gm, wm}, {gr, wr}} {
				for i := range pair[1] {
					if got, want := float64(pair[0][i]), float64(pair[1][i]); !approx.Scalar(got, want, 1e-6, 1e-6) {
						t.Fatalf("%dx%d forward output %d element %d = %v, reference %v", s.rows, s.cols, k, i, got, want)
					}
				}
			}
		}
		_, mean, rstd := forward(false, &cpuStorage{f: w}, nil)
		for _, withW := range []bool{false, true} {
			run := func(fast bool) (dx, dw, db []float32) {
				layerNormFast = fast
				dx, dw, db = make([]float32, n), make([]float32, s.cols), make([]float32, s.cols)
				for i := range dw {
					dw[i], db[i] = 0.5, -0.25 // the kernel adds into them
				}
				var ws Storage
				if withW {
					ws = &cpuStorage{f: w}
				}
				cpu.LayerNormGrad(&cpuStorage{f: dx}, &cpuStorage{f: dw}, &cpuStorage{f: db}, &cpuStorage{f: g}, &cpuStorage{f: x}, &cpuStorage{f: mean}, &cpuStorage{f: rstd}, ws, s.rows, s.cols)
				return dx, dw, db
			}
			wdx, wdw, wdb := run(false)
			gdx, gdw, gdb := run(true)
			for k, pair := range [][2][]float32{{gdx, wdx}, {gdw, wdw}, {gdb, wdb}} {
				for i := range pair[1] {
					got, want := float64(pair[0][i]), float64(pair[1][i])
					if !approx.Scalar(got, want, 1e-5, 1e-5) {
						t.Fatalf("%dx%d weight=%v: output %d element %d = %v, reference %v", s.rows, s.cols, withW, k, i, got, want)
					}
				}
			}
		}
	}
}

func BenchmarkAdamWKernel(b *testing.B) {
	exclusive(b)
	NoPoison(b)
	defer func(f bool) { adamwFast = f }(adamwFast)
	const n = 1 << 16
	p, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range g {
		g[i] = float32(i%100) / 1000
	}
	for _, fast := range []bool{false, true} {
		b.Run(map[bool]string{false: "reference", true: "fast"}[fast], func(b *testing.B) {
			adamwFast = fast
			b.SetBytes(4 * 7 * n)
			step := 0
			for b.Loop() {
				step++
				cpu.AdamW(&cpuStorage{f: p}, &cpuStorage{f: g}, &cpuStorage{f: m}, &cpuStorage{f: v}, n,
					AdamWStep{LR: 1e-3, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1, Step: step})
			}
		})
	}
}

func BenchmarkLayerNormGrad(b *testing.B) {
	exclusive(b)
	NoPoison(b)
	defer func(f bool) { layerNormFast = f }(layerNormFast)
	const rows, cols = 768, 128 // the GPT CPU recipe's activations
	gen := NewGenerator(1)
	x, g, w := make([]float32, rows*cols), make([]float32, rows*cols), make([]float32, cols)
	for i := range x {
		x[i], g[i] = float32(gen.NormFloat64()), float32(gen.NormFloat64())
	}
	for i := range w {
		w[i] = 1
	}
	mean, rstd, y := make([]float32, rows), make([]float32, rows), make([]float32, rows*cols)
	cpu.LayerNorm(&cpuStorage{f: y}, &cpuStorage{f: mean}, &cpuStorage{f: rstd}, &cpuStorage{f: x}, &cpuStorage{f: w}, nil, rows, cols, 1e-5)
	dx, dw := make([]float32, rows*cols), make([]float32, cols)
	for _, fast := range []bool{false, true} {
		b.Run(map[bool]string{false: "reference", true: "fast"}[fast], func(b *testing.B) {
			layerNormFast = fast
			for b.Loop() {
				cpu.LayerNormGrad(&cpuStorage{f: dx}, &cpuStorage{f: dw}, nil, &cpuStorage{f: g}, &cpuStorage{f: x}, &cpuStorage{f: mean}, &cpuStorage{f: rstd}, &cpuStorage{f: w}, rows, cols)
			}
		})
	}
}

// TestCrossEntropyFast checks the float32 cross-entropy kernels (the
// assembly exponentials for rows of 8 or more) against float64 formulas,
// and that rows with an infinite or NaN logit take the reference path.
func TestCrossEntropyFast(t *testing.T) {
	gen := NewGenerator(4)
	for _, cols := range []int{3, 8, 65, 1000} {
		const rows = 7
		x := make([]float32, rows*cols)
		for i := range x {
			x[i] = float32(gen.NormFloat64() * 4)
		}
		tg := make([]int64, rows)
		for r := range tg {
			tg[r] = int64(gen.IntN(cols))
		}
		tg[2] = -1 // ignored
		x[4*cols+1] = float32(math.Inf(-1))
		x[5*cols] = float32(math.Inf(1))
		x[6*cols+cols-1] = float32(math.NaN())
		loss, grad := make([]float32, rows), make([]float32, rows*cols)
		cpu.CrossEntropy(&cpuStorage{f: loss}, &cpuStorage{f: x}, &cpuStorage{dt: Int64, i: tg}, rows, cols, -1)
		cpu.CrossEntropyGrad(&cpuStorage{f: grad}, &cpuStorage{f: x}, &cpuStorage{dt: Int64, i: tg}, rows, cols, -1, 0.5)
		// rows with +Inf or NaN logits take the reference path: an
		// infinite loss (as in PyTorch) and NaN
		if !math.IsInf(float64(loss[5]), 1) || loss[6] == loss[6] {
			t.Errorf("cols %d: losses of rows with +Inf and NaN logits = %v, %v; want +Inf, NaN", cols, loss[5], loss[6])
		}
		for r := range 5 {
			if r == 2 {
				continue
			}
			row := x[r*cols : (r+1)*cols]
			m := math.Inf(-1)
			for _, v := range row {
				m = math.Max(m, float64(v))
			}
			var s float64
			for _, v := range row {
				s += math.Exp(float64(v) - m)
			}
			lse := m + math.Log(s)
			want := lse - float64(row[tg[r]])
			// loss = lse − x[t] in float32: error relative to |lse|
			if !approx.Scalar(float64(loss[r]), want, 0, 2e-6*(math.Abs(want)+math.Abs(lse))) {
				t.Errorf("cols %d row %d: loss %v, want %v", cols, r, loss[r], want)
			}
			for j, v := range row {
				w := 0.5 * math.Exp(float64(v)-lse)
				if int64(j) == tg[r] {
					w -= 0.5
				}
				if !approx.Scalar(float64(grad[r*cols+j]), w, 2e-6, 2e-9) {
					t.Fatalf("cols %d row %d: grad[%d] = %v, want %v", cols, r, j, grad[r*cols+j], w)
				}
			}
		}
	}
}

// softmaxRows returns rows×cols inputs for the softmax tests: random rows,
// then rows with a NaN, a −Inf, all −Inf, a +Inf and huge values.
func softmaxRows(rows, cols int) []float32 {
	g := NewGenerator(7)
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(g.NormFloat64() * 4)
	}
	special := [][]float32{
		{float32(math.NaN())},
		{float32(math.Inf(-1))},
		nil, // all −Inf
		{float32(math.Inf(1))},
		{1e30, -1e30, 3e4},
	}
	for k, sp := range special {
		r := rows - 1 - k
		if r < 0 {
			break
		}
		row := x[r*cols : (r+1)*cols]
		if sp == nil {
			for j := range row {
				row[j] = float32(math.Inf(-1))
			}
			continue
		}
		for j, v := range sp {
			row[(j*5)%cols] = v
		}
	}
	return x
}

// TestSoftmaxFast compares the kernels.Exp32 softmax, log-softmax and their
// gradients (assembly and Go loops) with the float64 reference kernels.
func TestSoftmaxFast(t *testing.T) {
	defer func(f bool) { softmaxFast = f }(softmaxFast)
	forEachPath(t, func(asm string) {
		for _, cols := range []int{1, 5, 8, 13, 64, 203} {
			rows := 9
			x := softmaxRows(rows, cols)
			g := softmaxRows(rows, cols)[:rows*cols]
			for i := range g { // finite upstream gradients
				if g[i]-g[i] != 0 {
					g[i] = 0.5
				}
			}
			for _, log := range []bool{false, true} {
				run := func(fast bool) (y, dx []float32) {
					softmaxFast = fast
					y, dx = make([]float32, len(x)), make([]float32, len(x))
					cpu.Softmax(&cpuStorage{f: y}, &cpuStorage{f: x}, rows, cols, log)
					cpu.SoftmaxGrad(&cpuStorage{f: dx}, &cpuStorage{f: g}, &cpuStorage{f: y}, rows, cols, log)
					return y, dx
				}
				wy, wdx := run(false)
				gy, gdx := run(true)
				for i := range wy {
					if !approx.Scalar(float64(gy[i]), float64(wy[i]), 2e-6, 2e-6) {
						t.Fatalf("asm=%v cols=%d log=%v: y[%d] (x %v) = %v, want %v", asm, cols, log, i, x[i], gy[i], wy[i])
					}
					if !approx.Scalar(float64(gdx[i]), float64(wdx[i]), 1e-5, 1e-5) {
						t.Fatalf("asm=%v cols=%d log=%v: dx[%d] = %v, want %v", asm, cols, log, i, gdx[i], wdx[i])
					}
				}
			}
		}
	})
}

// TestRowMax4 checks the multi-chain and assembly maximum, NaN included.
func TestRowMax4(t *testing.T) {
	forEachPath(t, func(asm string) {
		for _, n := range []int{1, 3, 8, 9, 16, 17, 24, 31, 32, 47, 100} {
			for at := range n {
				x := make([]float32, n)
				for i := range x {
					x[i] = -float32(i%7) - 100
				}
				x[at] = -3
				if got := kernels.Max(x); got != -3 {
					t.Fatalf("asm=%v n=%d: max with −3 at %d = %v", asm, n, at, got)
				}
				x[at] = float32(math.NaN())
				if got := kernels.Max(x); got == got {
					t.Fatalf("asm=%v n=%d: max with NaN at %d = %v", asm, n, at, got)
				}
			}
		}
	})
}

// TestArithFast checks that the assembly add, sub, mul and div give the Go
// loops' results bit for bit, specials and tails included.
func TestArithFast(t *testing.T) {
	forEachPath(t, func(asm string) { testArithFast(t, asm, []int{1, 7, 8, 15, 16, 17, 24, 31, 32, 40, 47, 1001}, 0) })
}

// TestArithStream checks the non-temporal kernels the same way: every
// output streamed, starting at each alignment within a vector.
func TestArithStream(t *testing.T) {
	exclusive(t)
	defer func(n int) { streamMinElems = n }(streamMinElems)
	streamMinElems = 0
	forEachPath(t, func(asm string) {
		for off := range 17 {
			testArithFast(t, asm, []int{1, 7, 8, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 1001}, off)
		}
	})
}

// testArithFast compares the kernels with the Go loops for each length in
// ns, the output starting off elements into its buffer.
func testArithFast(t *testing.T, asm string, ns []int, off int) {
	exclusive(t)
	defer func(f bool) { arithFast = f }(arithFast)
	g := NewGenerator(3)
	for _, n := range ns {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(g.NormFloat64()), float32(g.NormFloat64())
		}
		specials := []float32{0, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e38, -0.0}
		for i, v := range specials {
			if i < n {
				a[i], b[(i*3)%n] = v, specials[(i+2)%len(specials)]
			}
		}
		for _, op := range []BinaryOp{OpAdd, OpSub, OpMul, OpDiv} {
			run := func(fast bool) []float32 {
				arithFast = fast
				buf := make([]float32, off+n+1)
				for i := range buf {
					buf[i] = -7
				}
				d := buf[off : off+n]
				l := contiguousLayout([]int{n})
				cpu.Binary(op, &cpuStorage{f: d}, &cpuStorage{f: a}, l, &cpuStorage{f: b}, l)
				if buf[off+n] != -7 || (off > 0 && buf[off-1] != -7) {
					t.Fatalf("%s: op %v n=%d off=%d: wrote outside the output", asm, op, n, off)
				}
				return d
			}
			want, got := run(false), run(true)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("%s: op %v n=%d off=%d: [%d] %v, %v: got %v, want %v", asm, op, n, off, i, a[i], b[i], got[i], want[i])
				}
			}
		}
	}
}

// TestExpSubTo checks that the two-operand exponential gives the in-place
// one's results and sum bit for bit, leaving its source alone.
func TestExpSubTo(t *testing.T) {
	forEachPath(t, func(asm string) {
		for _, n := range []int{1, 7, 8, 9, 16, 24, 31, 64, 203} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i%23)*4.5 - 95
			}
			x[n/2] = float32(math.Inf(-1))
			src := append([]float32(nil), x...)
			dst := make([]float32, n)
			gotSum := kernels.ExpSubTo(dst, x, -1.25)
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(src[i]) {
					t.Fatalf("asm=%v n=%d: source [%d] changed to %v", asm, n, i, x[i])
				}
			}
			wantSum := kernels.ExpSub(x, -1.25)
			if math.Float32bits(gotSum) != math.Float32bits(wantSum) {
				t.Fatalf("asm=%v n=%d: sum %v, want %v", asm, n, gotSum, wantSum)
			}
			for i := range dst {
				if math.Float32bits(dst[i]) != math.Float32bits(x[i]) {
					t.Fatalf("asm=%v n=%d: [%d] = %v, want %v", asm, n, i, dst[i], x[i])
				}
			}
		}
	})
}

func BenchmarkGELUTanhFast(b *testing.B)      { benchGELURows(b, geluTanhF32) }
func BenchmarkGELUTanhReference(b *testing.B) { benchGELURows(b, perElement(OpGELUTanh)) }

// TestAVX512MatchesAVX2 checks that the AVX-512 kernels give the AVX2
// kernels' results bit for bit (they do the same operations per lane), on
// fresh random inputs of ragged lengths, so that every lane of the 16-wide
// blocks, the 8-wide block after them and the Go tail are compared.
func TestAVX512MatchesAVX2(t *testing.T) {
	if cpufeat.Detected < cpufeat.AVX512 || !kernels.HasAsm {
		t.Skipf("no AVX-512 kernels to compare: this build or machine runs at most %v", cpufeat.Detected)
	}
	g := NewGenerator(uint64(len(t.Name())) + 77)
	for range 30 {
		n := 1 + int(g.Float64()*300)
		x, gr := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(g.NormFloat64() * 4)
			gr[i] = float32(g.NormFloat64())
		}
		// specials at random places, and values around the kernels'
		// branch points (|x|/√2 = 1, the exponential's underflow, the GELU
		// flush from x = ±12.949953)
		for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, 1.4142135, -1.4142135, -13.2, 13.2, -12.949952, -12.949953, 12.949953, -0.0} {
			x[int(g.Float64()*float64(n))] = v
		}
		run := func(path string) (y, dx, e []float32, sum, m float32) {
			defer setKernelPath(t, path)()
			y, dx, e = make([]float32, n), make([]float32, n), make([]float32, n)
			geluF32(y, x)
			geluGradF32(dx, gr, x)
			sum = kernels.ExpSubTo(e, x, 1.5)
			m = kernels.Max(gr)
			return
		}
		y2, dx2, e2, s2, m2 := run("avx2")
		y5, dx5, e5, s5, m5 := run("avx512")
		if m2 != m5 {
			t.Fatalf("n=%d: row maximum avx512 %v, avx2 %v", n, m5, m2)
		}
		same := func(a, b float32) bool {
			return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
		}
		for i := range x {
			if !same(y5[i], y2[i]) || !same(dx5[i], dx2[i]) || !same(e5[i], e2[i]) {
				t.Fatalf("n=%d x[%d]=%v: avx512 GELU %v, grad %v, exp %v; avx2 %v, %v, %v", n, i, x[i], y5[i], dx5[i], e5[i], y2[i], dx2[i], e2[i])
			}
		}
		// the sums differ only in the order of the additions
		if !approx.Scalar(float64(s5), float64(s2), 1e-5, 0) {
			t.Fatalf("n=%d: exp sum avx512 %v, avx2 %v", n, s5, s2)
		}
	}
}

// BenchmarkLayerNormRows times the CPU backend's LayerNorm forward (weight
// and bias) and backward (dx, dw and db) at GPT-like shapes: 64 tokens of
// GPT-2's width and 256 tokens of a 384-wide model. Besides the wall time it
// reports the process's CPU time per op (cpu-ns/op), which a machine shared
// with other work disturbs less.
func BenchmarkLayerNormRows(b *testing.B) {
	NoPoison(b)
	for _, s := range []struct{ rows, cols int }{{64, 768}, {256, 384}} {
		gen := NewGenerator(1)
		n := s.rows * s.cols
		mk := func(k int, off float64) []float32 {
			v := make([]float32, k)
			for i := range v {
				v[i] = float32(gen.NormFloat64() + off)
			}
			return v
		}
		x, g, w, bias := mk(n, 0.5), mk(n, 0), mk(s.cols, 1), mk(s.cols, 0)
		y, mean, rstd := make([]float32, n), make([]float32, s.rows), make([]float32, s.rows)
		dx, dw, db := make([]float32, n), make([]float32, s.cols), make([]float32, s.cols)
		name := fmt.Sprintf("%dx%d", s.rows, s.cols)
		b.Run("fwd/"+name, func(b *testing.B) {
			b.SetBytes(int64(8 * n))
			c0 := cputime.Process()
			for b.Loop() {
				cpu.LayerNorm(&cpuStorage{f: y}, &cpuStorage{f: mean}, &cpuStorage{f: rstd}, &cpuStorage{f: x}, &cpuStorage{f: w}, &cpuStorage{f: bias}, s.rows, s.cols, 1e-5)
			}
			cputime.ReportPerOp(b, c0)
		})
		b.Run("bwd/"+name, func(b *testing.B) {
			b.SetBytes(int64(12 * n))
			c0 := cputime.Process()
			for b.Loop() {
				cpu.LayerNormGrad(&cpuStorage{f: dx}, &cpuStorage{f: dw}, &cpuStorage{f: db}, &cpuStorage{f: g}, &cpuStorage{f: x}, &cpuStorage{f: mean}, &cpuStorage{f: rstd}, &cpuStorage{f: w}, s.rows, s.cols)
			}
			cputime.ReportPerOp(b, c0)
		})
	}
}

// BenchmarkGELUScale runs the GELU kernels (forward and derivative) over
// 64×256 standard normal values times s: the tails of the larger scales
// reach the arguments where e^(−x²/2) leaves float32's normal range, and
// the smaller ones are the activations of a freshly initialised network
// (most vectors with all |x| < √2, which skip the erfc approximation).
func BenchmarkGELUScale(b *testing.B) {
	for _, s := range []float32{0.25, 0.5, 1, 2, 4, 6, 8, 12, 20} {
		g := NewGenerator(1)
		xs := make([]float32, 64*256)
		gs := make([]float32, len(xs))
		for i := range xs {
			xs[i] = float32(g.NormFloat64()) * s
			gs[i] = float32(g.NormFloat64())
		}
		benchGELUFwdGrad(b, fmt.Sprintf("s=%g", s), xs, gs)
	}
}

// benchGELUFwdGrad runs the GELU kernels over xs as the sub-benchmarks
// fwd/name and grad/name (the derivative with incoming gradient gs),
// reporting CPU time per call.
func benchGELUFwdGrad(b *testing.B, name string, xs, gs []float32) {
	y := make([]float32, len(xs))
	b.Run("fwd/"+name, func(b *testing.B) {
		NoPoison(b)
		c0 := cputime.Process()
		for b.Loop() {
			geluF32(y, xs)
		}
		cputime.ReportPerOp(b, c0)
	})
	b.Run("grad/"+name, func(b *testing.B) {
		NoPoison(b)
		c0 := cputime.Process()
		for b.Loop() {
			geluGradF32(y, gs, xs)
		}
		cputime.ReportPerOp(b, c0)
	})
}

// BenchmarkGELUTail runs the GELU kernels (forward, and the derivative with
// g = 1) over 16 Ki copies of one x: −13.1 and −13.0 are in [−13.22,
// −12.95], where Φ(x) would be subnormal (the kernels flush it to 0
// there: kernels.GELUFlushX2), and each instruction meeting a subnormal costs a
// microcode assist on Intel CPUs; −12.9, −10 and 0.5 are beside them.
func BenchmarkGELUTail(b *testing.B) {
	for _, x := range []float32{-13.1, -13.0, -12.9, -10, 0.5} {
		xs := make([]float32, 1<<14)
		gs := make([]float32, len(xs))
		for i := range xs {
			xs[i], gs[i] = x, 1
		}
		benchGELUFwdGrad(b, fmt.Sprintf("x=%g", x), xs, gs)
	}
}
