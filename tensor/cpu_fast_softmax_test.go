package tensor

import (
	"math"
	"testing"

	"github.com/wickml/wick/internal/cputime"
	"github.com/wickml/wick/internal/kernels"
)

// TestRowSumsF64 checks kernels.SumF64 and kernels.DotF64 (the AVX-512 and AVX2 kernels on
// whole blocks, Go on the rest) against single-chain float64 sums on each
// kernel path, on random rows of ragged lengths: the two differ only in the
// order of float64 additions (and the kernels' fused products), far below
// float32 resolution.
func TestRowSumsF64(t *testing.T) {
	forEachPath(t, func(asm string) {
		gen := NewGenerator(41)
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 31, 33, 768, 1023} {
			a, b := make([]float32, n), make([]float32, n)
			var wantSum, wantDot, absSum, absDot float64
			for i := range a {
				a[i], b[i] = float32(gen.NormFloat64()*3+1), float32(gen.NormFloat64())
				wantSum += float64(a[i])
				wantDot += float64(a[i]) * float64(b[i])
				absSum += math.Abs(float64(a[i]))
				absDot += math.Abs(float64(a[i]) * float64(b[i]))
			}
			if got := kernels.SumF64(a); math.Abs(got-wantSum) > 1e-14*absSum {
				t.Fatalf("%s: n=%d: kernels.SumF64 = %v, want %v", asm, n, got, wantSum)
			}
			if got := kernels.DotF64(a, b); math.Abs(got-wantDot) > 1e-14*absDot {
				t.Fatalf("%s: n=%d: kernels.DotF64 = %v, want %v", asm, n, got, wantDot)
			}
		}
	})
}

// TestSoftmaxSweeps checks that the log-softmax and softmax-gradient sweeps
// give the Go loops' results bit for bit on each kernel path, on random rows
// of ragged lengths.
func TestSoftmaxSweeps(t *testing.T) {
	forEachPath(t, func(asm string) {
		gen := NewGenerator(43)
		for _, n := range []int{1, 7, 8, 9, 16, 17, 24, 31, 40, 203} {
			x, g, e := make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range x {
				x[i], g[i], e[i] = float32(gen.NormFloat64()*4), float32(gen.NormFloat64()), float32(gen.Float64())
			}
			m, c, a := float32(1.75), float32(0.3125), float32(gen.NormFloat64())
			got, want := make([]float32, n), make([]float32, n)
			check := func(what string) {
				t.Helper()
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: %s n=%d: [%d] = %v, want %v", asm, what, n, i, got[i], want[i])
					}
				}
			}
			kernels.LogSoftmaxOut(got, x, m, c)
			for j, v := range x {
				want[j] = v - m - c
			}
			check("log-softmax")
			kernels.SoftmaxGradOut(got, e, g, a)
			for j, v := range e {
				want[j] = v * (g[j] - a)
			}
			check("softmax grad")
			copy(got, e)
			kernels.LogSoftmaxGradOut(got, g, a)
			for j, v := range e {
				want[j] = g[j] - v*a
			}
			check("log-softmax grad")
		}
	})
}

// BenchmarkSoftmaxRows times the CPU backend's softmax and log-softmax,
// forward and backward, on 256 rows of 1024, and GlobalNorm (the sum of
// squares of gradient clipping) over 1 Mi elements, reporting the process's
// CPU time per op (cpu-ns/op) besides the wall time.
func BenchmarkSoftmaxRows(b *testing.B) {
	NoPoison(b)
	const rows, cols = 256, 1024
	gen := NewGenerator(1)
	mk := func(k int) []float32 {
		v := make([]float32, k)
		for i := range v {
			v[i] = float32(gen.NormFloat64())
		}
		return v
	}
	x, g, y, dx := mk(rows*cols), mk(rows*cols), make([]float32, rows*cols), make([]float32, rows*cols)
	timed := func(b *testing.B, f func()) {
		c0 := cputime.Process()
		for b.Loop() {
			f()
		}
		cputime.ReportPerOp(b, c0)
	}
	for _, log := range []bool{false, true} {
		name := map[bool]string{false: "softmax", true: "logsoftmax"}[log]
		b.Run(name+"/fwd", func(b *testing.B) {
			timed(b, func() { cpu.Softmax(&cpuStorage{f: y}, &cpuStorage{f: x}, rows, cols, log) })
		})
		cpu.Softmax(&cpuStorage{f: y}, &cpuStorage{f: x}, rows, cols, log)
		b.Run(name+"/bwd", func(b *testing.B) {
			timed(b, func() { cpu.SoftmaxGrad(&cpuStorage{f: dx}, &cpuStorage{f: g}, &cpuStorage{f: y}, rows, cols, log) })
		})
	}
	b.Run("globalnorm", func(b *testing.B) {
		out := make([]float32, 1)
		timed(b, func() {
			cpuBackend{}.GlobalNorm(&cpuStorage{f: out}, []Storage{&cpuStorage{f: x}, &cpuStorage{f: g}}, []int{len(x), len(g)})
		})
	})
}
