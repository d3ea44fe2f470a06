// Package backendtest is the one test suite that every tensor.Backend runs:
// the CPU backend in every build (this package's tests, once per CPU
// kernel path), the CUDA backend under the cuda build tag (package cuda's
// TestBackend, on a real or an emulated GPU). It is modelled on gonum's
// blas/testblas and candle's test_device!: the checks are written once,
// against the backend interface, and a backend passes them or fails them.
//
// Each kernel of the interface (and each optional one a backend implements:
// tensor.FusedAttention, tensor.Normer, tensor.DropoutMasker) is checked
// against a plain float64 reference in this package on fresh random inputs:
// ragged shapes, strided, offset and broadcast views, special values, and
// forward and backward kernels alike. Every output is poisoned (NaN-filled)
// before a kernel runs, so an element a kernel forgets to write fails.
//
// Tolerances follow the length of the reduction behind each result (see
// tolerance.go): a float32 sum of n terms is held to λ·√n·u of the size of
// its terms (u = 2⁻²⁴), the probabilistic bound of Higham and Mary, so a
// 50,257-wide softmax row is allowed more rounding than a 5-wide one while
// a wrong element still fails.
//
// The inputs come from a generator seeded from the clock; the seed is
// logged, and the -seed flag repeats a run.
package backendtest

import (
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/wickml/wick/tensor"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the random test inputs of the backend suite (0: from the clock)")

// NewRand returns a generator of test inputs seeded by -seed, or from the
// clock when the flag is 0; it logs the seed so that a failing run can be
// repeated.
func NewRand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (repeat with -seed=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, 17))
}

// check is one entry of the suite: a name (the subtest's) and the function
// that tests a backend.
type check struct {
	name string
	run  func(t testing.TB, b tensor.Backend)
}

// checks lists the suite in the order it runs.
var checks = []check{
	{"Copy", testCopy},
	{"CopyOverlapping", testCopyOverlapping},
	{"CastSpecialValues", testCastSpecialValues},
	{"Fill", testFill},
	{"HostReads", testHostReads},
	{"AllocZeroes", testAllocZeroes},
	{"Unary", testUnary},
	{"UnaryGrad", testUnaryGrad},
	{"Binary", testBinary},
	{"CompareInt64", testCompareInt64},
	{"Where", testWhere},
	{"ManyDims", testManyDims},
	{"Reduce", testReduce},
	{"ReduceLengths", testReduceLengths},
	{"MatMul", testMatMul},
	{"Softmax", testSoftmax},
	{"LayerNorm", testLayerNorm},
	{"LayerNormGradWeightsOnly", testLayerNormGradWeightsOnly},
	{"Embedding", testEmbedding},
	{"CrossEntropy", testCrossEntropy},
	{"AdamW", testAdamW},
	{"GlobalNorm", testGlobalNorm},
	{"Attention", testAttention},
	{"DropoutMask", testDropoutMask},
}

// Run runs every check of the suite on b, each as a subtest of t named
// after the kernel it tests (t.Run(name), so -test.run 'TestX/Softmax'
// picks one). The checks of an optional interface that b does not
// implement pass at once, saying so in the log.
func Run(t *testing.T, b tensor.Backend) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.run(t, b) })
	}
}

// Names returns the names of the suite's subtests, in the order Run runs
// them.
func Names() []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = c.name
	}
	return out
}
