package backendtest

import (
	"flag"
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/internal/testseed"
	"github.com/wickml/wick/tensor"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the random test inputs of the backend suite (0: WICK_TEST_SEED's, a fixed seed when it is unset; see internal/testseed)")

// NewRand returns a generator of test inputs seeded by -seed, or, when the
// flag is 0, by WICK_TEST_SEED (internal/testseed: a fixed seed when it is
// unset, a fresh one for "random"); it logs the seed so that a failing run
// can be repeated.
func NewRand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = testseed.Value(1)
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
	{"Cast16", testCast16},
	{"Fill", testFill},
	{"HostReads", testHostReads},
	{"AllocZeroes", testAllocZeroes},
	{"Unary", testUnary},
	{"UnaryGrad", testUnaryGrad},
	{"Binary", testBinary},
	{"Unary16", testUnary16},
	{"UnaryGrad16", testUnaryGrad16},
	{"Binary16", testBinary16},
	{"CompareInt64", testCompareInt64},
	{"Where", testWhere},
	{"Where16", testWhere16},
	{"ManyDims", testManyDims},
	{"Reduce", testReduce},
	{"ReduceLengths", testReduceLengths},
	{"MatMul", testMatMul},
	{"MatMul16", testMatMul16},
	{"Softmax", testSoftmax},
	{"LayerNorm", testLayerNorm},
	{"LayerNormGradWeightsOnly", testLayerNormGradWeightsOnly},
	{"Embedding", testEmbedding},
	{"Sort", testSort},
	{"Scan", testScan},
	{"CrossEntropy", testCrossEntropy},
	{"AdamW", testAdamW},
	{"GlobalNorm", testGlobalNorm},
	{"Attention", testAttention},
	{"DropoutMask", testDropoutMask},
	{"RMSNorm", testRMSNorm},
	{"Rotary", testRotary},
	{"SwiGLU", testSwiGLU},
	{"GroupedAttention", testGroupedAttention},
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
