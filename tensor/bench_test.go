package tensor_test

// Benchmarks of the CPU backend's main kernels. scripts/bench_ops.sh runs
// them next to the same operations in PyTorch (scripts/bench_ops_peer.py)
// and prints the ratios. There are no thresholds here.

import (
	"fmt"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/internal/cputime"
	"github.com/wickml/wick/tensor"
)

// reportFlops reports GFLOP/s for flops floating-point operations per
// iteration.
func reportFlops(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// reportBytes reports GB/s for bytes moved per iteration.
func reportBytes(b *testing.B, bytes float64) {
	b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

func benchMatMul(b *testing.B, x, y *tensor.Tensor) {
	m, k := x.Shape()[0], x.Shape()[1]
	n := y.Shape()[1]
	b.ResetTimer()
	for b.Loop() {
		x.MatMul(y)
	}
	reportFlops(b, 2*float64(m)*float64(n)*float64(k))
}

// BenchmarkMatMul multiplies square matrices.
func BenchmarkMatMul(b *testing.B) {
	tensor.NoPoison(b)
	for _, n := range []int{64, 256, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tensor.ManualSeed(1)
			benchMatMul(b, tensor.Randn(n, n), tensor.Randn(n, n))
		})
	}
}

// BenchmarkMatMulGPT runs the products of a GPT layer with 768 rows
// (batch·time), 128 channels and a 512-wide hidden layer: the forward
// product X·W and the two of its backward pass, Xᵀ·G (the weight
// gradient, a transposed view on the left) and G·Wᵀ (the input gradient, a
// transposed view on the right).
func BenchmarkMatMulGPT(b *testing.B) {
	tensor.NoPoison(b)
	tensor.ManualSeed(1)
	x := tensor.Randn(768, 128)
	w := tensor.Randn(128, 512)
	g := tensor.Randn(768, 512)
	b.Run("768x128*128x512", func(b *testing.B) { benchMatMul(b, x, w) })
	b.Run("AT*B=128x768*768x512", func(b *testing.B) { benchMatMul(b, x.T(), g) })
	b.Run("A*BT=768x512*512x128", func(b *testing.B) { benchMatMul(b, g, w.T()) })
}

// BenchmarkAdd adds two tensors of 1M elements.
func BenchmarkAdd(b *testing.B) {
	tensor.NoPoison(b)
	tensor.ManualSeed(1)
	x, y := tensor.Randn(1024, 1024), tensor.Randn(1024, 1024)
	c0 := cputime.Process()
	for b.Loop() {
		x.Add(y)
	}
	cputime.ReportPerOp(b, c0)
	reportBytes(b, 3*4*1024*1024)
}

// BenchmarkAddRelease is BenchmarkAdd with each result released, as
// PyTorch frees a result nobody refers to: the CPU free list hands its
// buffer to the next Add, where BenchmarkAdd's results wait for the
// garbage collector.
func BenchmarkAddRelease(b *testing.B) {
	tensor.NoPoison(b)
	tensor.ManualSeed(1)
	x, y := tensor.Randn(1024, 1024), tensor.Randn(1024, 1024)
	c0 := cputime.Process()
	for b.Loop() {
		x.Add(y).Release()
	}
	cputime.ReportPerOp(b, c0)
	reportBytes(b, 3*4*1024*1024)
}

// BenchmarkSoftmax normalises 256 rows of 4096.
func BenchmarkSoftmax(b *testing.B) {
	tensor.NoPoison(b)
	tensor.ManualSeed(1)
	x := tensor.Randn(256, 4096)
	for b.Loop() {
		x.Softmax(-1)
	}
	reportBytes(b, 2*4*256*4096)
}

// BenchmarkMLP runs the forward and backward pass of a small MLP:
// [64, 128] → Linear 256 → GELU → Linear 10 → cross-entropy.
func BenchmarkMLP(b *testing.B) {
	tensor.NoPoison(b)
	tensor.ManualSeed(1)
	x := tensor.Randn(64, 128)
	targets := tensor.RandInt(0, 10, 64)
	w1 := tensor.Randn(128, 256).MulScalar(0.05).RequiresGrad()
	b1 := tensor.Zeros(256).RequiresGrad()
	w2 := tensor.Randn(256, 10).MulScalar(0.05).RequiresGrad()
	b2 := tensor.Zeros(10).RequiresGrad()
	params := []*tensor.Tensor{w1, b1, w2, b2}
	for b.Loop() {
		for _, p := range params {
			p.ZeroGrad()
		}
		h := x.MatMul(w1).Add(b1).GELU()
		loss := tensor.CrossEntropy(h.MatMul(w2).Add(b2), targets)
		loss.Backward()
	}
	// forward 2·64·(128·256 + 256·10), backward twice that
	reportFlops(b, 3*2*64*(128*256+256*10))
}

// BenchmarkMLPInference is the forward pass of BenchmarkMLP without
// recording.
func BenchmarkMLPInference(b *testing.B) {
	tensor.NoPoison(b)
	tensor.ManualSeed(1)
	x := tensor.Randn(64, 128)
	w1, b1 := tensor.Randn(128, 256), tensor.Zeros(256)
	w2, b2 := tensor.Randn(256, 10), tensor.Zeros(10)
	for b.Loop() {
		autograd.NoGrad(func() { x.MatMul(w1).Add(b1).GELU().MatMul(w2).Add(b2) })
	}
	reportFlops(b, 2*64*(128*256+256*10))
}

// BenchmarkSmallOps measures the fixed cost per operation on tiny tensors,
// where recording and the backward engine dominate: a recorded three-op
// forward and backward, the same forward unrecorded inside NoGrad, and the
// recorded pass while another goroutine sits inside NoGrad (grad mode is
// per goroutine: recording then looks up the calling goroutine's mode).
func BenchmarkSmallOps(b *testing.B) {
	tensor.NoPoison(b)
	x := tensor.Ones(3)
	step := func() {
		w := tensor.Ones(3).RequiresGrad()
		w.Mul(x).Add(w).Mean().Backward()
	}
	b.Run("forward+backward", func(b *testing.B) {
		for b.Loop() {
			step()
		}
	})
	b.Run("forward-nograd", func(b *testing.B) {
		w := tensor.Ones(3).RequiresGrad()
		autograd.NoGrad(func() {
			for b.Loop() {
				w.Mul(x).Add(w).Mean()
			}
		})
	})
	b.Run("forward+backward-beside-nograd", func(b *testing.B) {
		release, started := make(chan struct{}), make(chan struct{})
		go autograd.NoGrad(func() { close(started); <-release })
		<-started
		for b.Loop() {
			step()
		}
		close(release)
	})
}
