//go:build cuda

package cuda

import (
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tensor/backendtest"
)

// The kernels are checked by the backend suite (suite_test.go, package
// tensor/backendtest). The tests here that compare the CUDA backend with
// the CPU backend (TF32 products, whole models) use fresh random inputs
// (the seed is logged; the suite's -seed flag repeats a run), and poison
// every output (NaN-filled) before a kernel runs, so that an element a
// kernel forgets to write fails the comparison.

// requireGPU is the WICK_REQUIRE_GPU=1 switch: every skip for want of a
// GPU or a CUDA library (cuBLAS) becomes a failure, so that a run meant
// for a GPU (scripts/device_run.sh) cannot pass having tested nothing.
var requireGPU = os.Getenv("WICK_REQUIRE_GPU") == "1"

// skipNoGPU skips t for want of a GPU, or fails it under WICK_REQUIRE_GPU=1.
func skipNoGPU(t testing.TB, format string, args ...any) {
	t.Helper()
	if requireGPU {
		t.Fatalf(format+" (WICK_REQUIRE_GPU=1: a missing GPU or CUDA library fails the test)", args...)
	}
	t.Skipf(format, args...)
}

var logBLAS sync.Once

// gpu returns the CUDA and CPU backends, skipping the test when no device
// can be used (failing it under WICK_REQUIRE_GPU=1). The first call logs
// the cuBLAS library in use.
func gpu(t testing.TB) (g, c tensor.Backend) {
	t.Helper()
	if !Available() {
		why := "cuda: no CUDA device on this machine"
		if initErr != nil {
			why = initErr.Error()
		}
		skipNoGPU(t, "%s; the GPU tests need one (they run on a lent device, see scripts/device_check.sh)", why)
	}
	g, err := tensor.BackendFor(tensor.CUDA(0))
	if err != nil {
		skipNoGPU(t, "cuda: cannot open cuda:0: %v", err)
	}
	logBLAS.Do(func() {
		lib, _ := BLASLibrary(0)
		name, _ := DeviceName(0)
		t.Logf("cuda:0 is %s; cuBLAS: %s", name, lib)
	})
	c, err = tensor.BackendFor(tensor.CPU)
	if err != nil {
		t.Fatal(err)
	}
	return g, c
}

// newRNG returns a generator seeded by the suite's -seed flag or the
// clock, the seed logged for repeating.
func newRNG(t testing.TB) *rand.Rand { return backendtest.NewRand(t) }

func randn(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}

// pair is one storage uploaded to both backends.
type pair struct {
	g, c tensor.Storage
}

func upload(g, c tensor.Backend, data []float32) pair {
	return pair{g.FromFloat32s(data), c.FromFloat32s(data)}
}

// poisoned returns an n-element output on both backends, NaN-filled (or
// filled with the int64 poison value).
func poisoned(g, c tensor.Backend, dt tensor.DType, n int) pair {
	p := pair{g.Alloc(dt, n), c.Alloc(dt, n)}
	if n > 0 {
		l := tensor.Layout{Shape: []int{n}, Strides: []int{1}}
		v := math.NaN()
		if dt == tensor.Int64 {
			v = -7777777
		}
		g.Fill(p.g, l, v)
		c.Fill(p.c, l, v)
	}
	return p
}

func whole(n int) tensor.Layout { return tensor.Layout{Shape: []int{n}, Strides: []int{1}} }

// read returns the whole storage of p from both backends.
func (p pair) read(g, c tensor.Backend) (gv, cv []float32) {
	n := p.g.Len()
	return g.Float32s(p.g, whole(n)), c.Float32s(p.c, whole(n))
}
