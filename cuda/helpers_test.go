//go:build cuda

package cuda

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/wickml/wick/tensor"
)

// The GPU tests compare the CUDA backend with the CPU reference backend on
// fresh random inputs (the seed is logged; -seed repeats a run). Every
// output is poisoned (NaN-filled) before a kernel runs, so an element a
// kernel forgets to write fails the comparison.

var seedFlag = flag.Uint64("seed", 0, "seed of the random test inputs (0: from the clock)")

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

// newRNG returns a generator with a fresh seed, logged for repeating.
func newRNG(t testing.TB) *rand.Rand {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (repeat with -seed=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, 17))
}

func randn(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}

func randIn(r *rand.Rand, n int, lo, hi float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(lo + (hi-lo)*r.Float64())
	}
	return out
}

func nanSlice(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(math.NaN())
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

func uploadInts(g, c tensor.Backend, data []int64) pair {
	return pair{g.FromInt64s(data), c.FromInt64s(data)}
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

func (p pair) readInts(g, c tensor.Backend) (gv, cv []int64) {
	n := p.g.Len()
	return g.Int64s(p.g, whole(n)), c.Int64s(p.c, whole(n))
}

// tol is a comparison tolerance: |got − want| ≤ rel·|want| + abs.
type tol struct{ rel, abs float64 }

var (
	// elementwiseTol is torch.allclose's default (rtol 1e-5, atol 1e-8):
	// the floor matters only for results near zero, such as GELU's tail,
	// where the CPU's float32 approximation (tensor/cpu_fast.go) and the
	// GPU's double formula differ by far less than 1e-8.
	elementwiseTol = tol{1e-5, 1e-8}
	// cancelTol is for results that are differences of O(1) terms, which
	// can cancel to nearly zero: GELU's derivative Φ(x) + x·φ(x) (zero at
	// x ≈ −0.75) and log-softmax's x − max − log Σ near the row's maximum.
	// The CPU computes these in float32 (tensor/cpu_fast.go), like
	// PyTorch's CPU kernels, so its result carries the rounding of the
	// terms, a few 1e-8 for terms of size ~1, which the GPU's double
	// arithmetic does not (seen on the emulated device, scripts/cuda_emu.sh).
	cancelTol = tol{1e-5, 2e-7}
	// reduceTol is for sums and normalisations of O(1) values, whose
	// rounding depends on the order of summation.
	reduceTol = tol{1e-5, 1e-6}
)

// closeTo reports whether got matches want: NaN matches NaN, infinities
// match themselves.
func (t tol) closeTo(got, want float32) bool {
	g, w := float64(got), float64(want)
	switch {
	case math.IsNaN(w) || math.IsNaN(g):
		return math.IsNaN(w) && math.IsNaN(g)
	case math.IsInf(w, 0) || math.IsInf(g, 0):
		return g == w
	}
	return math.Abs(g-w) <= t.rel*math.Abs(w)+t.abs
}

// compare fails t at the first few mismatches of got against want.
func compare(t testing.TB, what string, got, want []float32, tl tol) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if !tl.closeTo(got[i], want[i]) {
			if bad < 5 {
				t.Errorf("%s: element %d: GPU %v, CPU %v", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(want))
	}
}

func compareInts(t testing.TB, what string, got, want []int64) {
	t.Helper()
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			if bad < 5 {
				t.Errorf("%s: element %d: GPU %d, CPU %d", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(want))
	}
}

// view is a strided view of the given shape into a storage of size n.
type view struct {
	l tensor.Layout
	n int // storage elements
}

func (v view) String() string {
	return fmt.Sprintf("shape %v strides %v offset %d", v.l.Shape, v.l.Strides, v.l.Offset)
}

// randomShape returns 1 to maxDims dims of sizes 1..maxSize.
func randomShape(r *rand.Rand, maxDims, maxSize int) []int {
	s := make([]int, 1+r.IntN(maxDims))
	for i := range s {
		s[i] = 1 + r.IntN(maxSize)
	}
	return s
}

// kinds of views the tests build
const (
	contig    = iota // row-major from offset 0
	strided          // permuted dims, gaps, an offset
	broadcast        // strided, with some dims of stride 0
)

// makeView lays out shape in a storage: contiguous, or with the dims in a
// random memory order, each with a random step and padding, at a random
// offset (and with stride 0 on some dims for broadcast).
func makeView(r *rand.Rand, shape []int, kind int) view {
	nd := len(shape)
	if kind == contig {
		st := tensor.ContiguousStrides(shape)
		n := 1
		for _, d := range shape {
			n *= d
		}
		return view{tensor.Layout{Shape: append([]int{}, shape...), Strides: st}, max(n, 1)}
	}
	order := r.Perm(nd)
	strides := make([]int, nd)
	size := 1
	for i := nd - 1; i >= 0; i-- {
		d := order[i]
		step := 1 + r.IntN(2)
		strides[d] = size * step
		size *= (shape[d]-1)*step + 1 + r.IntN(2)
	}
	if kind == broadcast {
		for d := range nd {
			if r.IntN(2) == 0 {
				strides[d] = 0
			}
		}
	}
	off := r.IntN(3)
	return view{tensor.Layout{Shape: append([]int{}, shape...), Strides: strides, Offset: off}, off + size}
}

// viewKinds are the three layouts every strided kernel is tested with.
var viewKinds = []int{contig, strided, broadcast}

var kindNames = []string{"contiguous", "strided", "broadcast"}
