package tensor

import (
	"testing"

	"github.com/wickml/wick/internal/cputime"
)

// benchUnary times op over 1M contiguous elements drawn from N(0, 3²),
// the output released each time, and reports the process's CPU time per
// op (cpu-ns/op) besides the wall time (run with -cpu 1 for one thread).
func benchUnary(b *testing.B, f func(*Tensor) *Tensor) {
	NoPoison(b)
	x := NewGenerator(1).Randn(1 << 20).MulScalar(3)
	b.SetBytes(8 << 20)
	c0 := cputime.Process()
	for b.Loop() {
		f(x).Release()
	}
	cputime.ReportPerOp(b, c0)
}

func BenchmarkUnaryExp1M(b *testing.B)     { benchUnary(b, (*Tensor).Exp) }
func BenchmarkUnaryTanh1M(b *testing.B)    { benchUnary(b, (*Tensor).Tanh) }
func BenchmarkUnarySigmoid1M(b *testing.B) { benchUnary(b, (*Tensor).Sigmoid) }

// BenchmarkUnaryKernels times the dense path of each kernel row on 64 Ki
// elements (in cache) on each kernel path this machine runs, with CPU time
// per op (cpu-ns/op).
func BenchmarkUnaryKernels(b *testing.B) {
	const n = 1 << 16
	g := NewGenerator(2)
	x, y := make([]float32, n), make([]float32, n)
	for k := range x {
		x[k] = float32(g.NormFloat64() * 3)
	}
	for _, op := range unaryKernelOps {
		u := &unaryOps[op]
		for _, path := range kernelPaths() {
			b.Run(u.name+"/"+path, func(b *testing.B) {
				defer setKernelPath(b, path)()
				b.SetBytes(8 * n)
				c0 := cputime.Process()
				for b.Loop() {
					u.dense(y, x, UnaryParams{})
				}
				cputime.ReportPerOp(b, c0)
			})
		}
	}
}
