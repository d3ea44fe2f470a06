package tensor_test

// The op goldens in bfloat16 and float16: every case of the float32 goldens
// (golden_test.go) but the creation ops, replayed with 16-bit inputs and
// 16-bit leaves, against PyTorch 1.13's 16-bit results on the CPU, plus
// cases of gradient accumulation (golden16Extra).
// scripts/gen_golden_bf16_ops.py (run with /usr/bin/python3) writes
// testdata/golden/ops_bf16.json and ops_f16_bf16.json: PyTorch's bits and,
// where they differ, the exact result (the op and its derivative in
// float64 on the same 16-bit values, rounded once); for the float16 ops
// PyTorch 1.13 has no CPU kernel for, the exact result alone.
//
// How results are compared. u is the dtype's unit roundoff (2⁻⁸ for
// bfloat16, 2⁻¹¹ for float16): one rounding moves a value by at most u
// relative, and one ulp is 2u relative at a power of two. scale is the
// largest |value| among the case's inputs, its upstream gradients and the
// result (a rounding of an intermediate of that size moves a result that
// cancels to near zero by up to u·scale, however many ulps that is there);
// n is the sum length of a gradient that undoes broadcasting (the
// upstream's elements per gradient element: each partial sum PyTorch
// rounds adds up to u·scale).
//
//   - Exact (the bit patterns, any NaN equal to any NaN): every forward
//     result where Wick and PyTorch round the same float32 value once or
//     copy elements: the elementwise ops (their scalar operands rounded
//     to the dtype first, as PyTorch converts a Python scalar),
//     comparisons, Where, views, Cat/Stack/Split, Tril/Triu,
//     Gather/Scatter/Sort/TopK, Embedding/IndexSelect, Dropout; and the
//     gradients of a leaf used two and three times (each gradient and
//     each sum rounded in the dtype, in PyTorch's order).
//   - Otherwise (goldenTol16 gives the counts per op and kind, with the
//     reason): within ulps ulps of PyTorch's, or u·slack·n·scale of it, or
//     within one ulp of the exact result. Wick computes the reductions,
//     softmax, layer norm, cross-entropy, the scans and the derivatives of
//     the unary ops in float32 and rounds once, so it is within an ulp of
//     the exact result where PyTorch 1.13 composes the op (or its
//     derivative) of 16-bit ops that round in between (Var, LogSumExp,
//     GELU, Rsqrt; Sin's g·cos x, softmax's backward from the 16-bit
//     output). Compositions (attention, FanOut) and the derivatives Wick
//     itself composes of 16-bit ops (Div's −g·a/b², Pow's) round between
//     their ops on both sides, at points that differ. The sums here are
//     short (at most 300 terms), so float32 accumulation in another order
//     adds at most 300·2⁻²⁴ of the sum of magnitudes, well below u·scale.
//
// TestGoldenCoverage writes the ops whose results differ from PyTorch's by
// more than one ulp into testdata/golden/COVERAGE.md, with how far and
// why (golden16Why).

import (
	"encoding/base64"
	le "encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/wickml/wick/tensor"
)

// golden16Paths are the 16-bit golden files and their dtypes.
var golden16Paths = []struct {
	path string
	dt   tensor.DType
}{
	{"../testdata/golden/ops_bf16.json", tensor.BFloat16},
	{"../testdata/golden/ops_f16_bf16.json", tensor.Float16},
}

// golden16Tensor is a tensor of a 16-bit golden: bit patterns in base64
// (uint16 for bfloat16 and float16, uint32 for float32), or int64 data.
type golden16Tensor struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	Bits  string `json:"bits"`
	Data  []int  `json:"data"`
}

type golden16Input struct {
	golden16Tensor
	RequiresGrad bool                         `json:"requires_grad"`
	Views        []map[string]json.RawMessage `json:"views"`
	Grad         json.RawMessage              `json:"grad"` // absent, null or a golden16Tensor
	// ExactGrad is the float64 reference's gradient rounded once, where
	// its bits differ from Grad's.
	ExactGrad *golden16Tensor `json:"exact_grad"`
}

type golden16Case struct {
	Name      string                     `json:"name"`
	Op        string                     `json:"op"`
	Kind      string                     `json:"kind"`
	Reference string                     `json:"reference"` // "torch", or "float64" where torch has no 16-bit kernel
	Args      map[string]json.RawMessage `json:"args"`
	Inputs    []golden16Input            `json:"inputs"`
	Outputs   []golden16Tensor           `json:"outputs"`
	// ExactOutputs are the float64 reference's outputs rounded once,
	// where their bits differ from Outputs' (nil: the same).
	ExactOutputs []*golden16Tensor `json:"exact_outputs"`
	Multi        bool              `json:"multi"`
	Upstream     []*golden16Tensor `json:"upstream"`
}

type golden16File struct {
	dt    tensor.DType
	cases []golden16Case
}

var (
	golden16Once  sync.Once
	golden16Files []golden16File
	golden16Err   error
)

func loadGolden16(t *testing.T) []golden16File {
	t.Helper()
	golden16Once.Do(func() {
		for _, p := range golden16Paths {
			b, err := os.ReadFile(p.path)
			if err != nil {
				golden16Err = fmt.Errorf("reading 16-bit goldens (regenerate with /usr/bin/python3 scripts/gen_golden_bf16_ops.py): %w", err)
				return
			}
			var f struct {
				DType string         `json:"dtype"`
				Cases []golden16Case `json:"cases"`
			}
			if err := json.Unmarshal(b, &f); err != nil {
				golden16Err = fmt.Errorf("parsing %s: %w", p.path, err)
				return
			}
			if f.DType != p.dt.String() {
				golden16Err = fmt.Errorf("%s holds %s cases, want %s", p.path, f.DType, p.dt)
				return
			}
			golden16Files = append(golden16Files, golden16File{p.dt, f.Cases})
		}
	})
	if golden16Err != nil {
		t.Fatal(golden16Err)
	}
	return golden16Files
}

// shape returns the tensor's shape ([] for a 0-d one).
func (g golden16Tensor) shape() []int {
	if g.Shape == nil {
		return []int{}
	}
	return g.Shape
}

// bits16 decodes 16-bit bit patterns.
func (g golden16Tensor) bits16(t *testing.T) []uint16 {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(g.Bits)
	if err != nil || len(raw)%2 != 0 {
		t.Fatalf("golden bits of a %s tensor: %v (%d bytes)", g.DType, err, len(raw))
	}
	out := make([]uint16, len(raw)/2)
	for i := range out {
		out[i] = le.LittleEndian.Uint16(raw[2*i:])
	}
	return out
}

// float32s decodes float32 bit patterns.
func (g golden16Tensor) float32s(t *testing.T) []float32 {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(g.Bits)
	if err != nil || len(raw)%4 != 0 {
		t.Fatalf("golden bits of a float32 tensor: %v (%d bytes)", err, len(raw))
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(le.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// build returns the golden tensor as a contiguous Wick tensor.
func (g golden16Tensor) build(t *testing.T) *tensor.Tensor {
	t.Helper()
	shape := g.shape()
	switch g.DType {
	case "bfloat16": // (on the default device, as New's: TestGolden16CUDA)
		return tensor.FromBits16(tensor.BFloat16, g.bits16(t), goldenNumel(shape)).To(tensor.DefaultDevice()).Reshape(shape...)
	case "float16":
		return tensor.FromBits16(tensor.Float16, g.bits16(t), goldenNumel(shape)).To(tensor.DefaultDevice()).Reshape(shape...)
	case "float32":
		return tensor.New(g.float32s(t), goldenNumel(shape)).Reshape(shape...)
	case "int64":
		return tensor.FromInts(g.Data, goldenNumel(shape)).Reshape(shape...)
	}
	t.Fatalf("unknown golden dtype %q", g.DType)
	return nil
}

// tol16 is how far a result may be from PyTorch's: ulps ulps of the
// dtype, or u·slack·n·scale (scale: the largest |value| of the case's
// inputs, upstream gradients and this result; n: the number of values
// summed into each element of a gradient that undoes broadcasting, 1
// otherwise); or, with exact set, one ulp from the float64 reference
// rounded once.
type tol16 struct {
	ulps  int
	slack float64
	exact bool
}

// exact16 asks for PyTorch's bit patterns.
var exact16 = tol16{}

// goldenTol16 returns the tolerances of a case's forward results and of
// its gradients (see the comment at the top of the file for the
// derivation): the roundings one side does that the other does not on
// the op's path, per op and per op kind.
func goldenTol16(c *golden16Case) (fwd, bwd tol16) {
	switch c.Op {
	case "LeafTwice", "LeafThrice":
		// each product and each sum rounded once, on both sides, in the
		// same order
		return exact16, exact16
	case "NonLeafTwice":
		// as FanOut
		return tol16{4, 2, true}, tol16{4, 4, true}
	case "Rsqrt", "PowScalar", "GELU", "GELUTanh":
		// PyTorch 1.13 rounds inside these ops' 16-bit kernels: rsqrt
		// as 1/√x with √x rounded (also pow(x, −0.5)), pow(x, 3) as
		// x·x·x, GELU's erf and GELUTanh's tanh and each product of
		// their formulas rounded (a saturated GELU of −12 is 0 there and
		// in float64 through erf, −2·10⁻³² in Wick through erfc); Wick
		// rounds once, within an ulp of the exact result
		return tol16{0, 1, true}, tol16{4, 1, true}
	case "ScatterAdd":
		// PyTorch adds the values of a repeated position one at a time
		// in the 16-bit dtype, rounding each sum; Wick adds in float32
		// and rounds once, within an ulp of the exact result
		return tol16{0, 0, true}, tol16{4, 1, true}
	case "FanOut":
		// a composition of six elementwise ops, each rounded on both
		// sides (float16: torch has no kernel for exp and sin, the
		// reference rounds the whole composition once)
		return tol16{4, 2, true}, tol16{4, 4, true}
	case "Var", "LogSumExp":
		// PyTorch 1.13: logsumexp a composition of 16-bit ops (max,
		// subtract, exp, sum, log, add), var's derivative one (subtract
		// the mean, multiply); Wick: float32 throughout, one rounding;
		// each of PyTorch's roundings of an intermediate near the
		// result's scale moves it by u·scale
		return tol16{2, 4, true}, tol16{2, 4, true}
	case "Cumprod":
		// forward: float32 products rounded once on both sides;
		// PyTorch's derivative is a composition of 16-bit ops (sums of
		// products divided by the input), Wick's float32, rounded once
		return tol16{1, 1, true}, tol16{2, 4, true}
	}
	switch c.Kind {
	case "elementwise", "view":
		// forward: one rounding of the same float32 value (the
		// comparisons and data movers: no rounding); derivatives are
		// 16-bit compositions of up to four ops on both sides (Div's
		// −g·a/b², Pow's), and those that use the rounded output y
		// (Rsqrt's −g·y³/2, Exp's g·y) carry its rounding up to three
		// times
		return exact16, tol16{4, 1, true}
	case "reduce":
		// float32 sums rounded once on both sides, in other orders;
		// PyTorch's mean rounds the sum before dividing
		return tol16{1, 1, true}, tol16{2, 2, true}
	case "matmul":
		// float32 products rounded once (oneDNN's; PyTorch's small-matrix
		// fallback rounds each partial sum, see tensor/matmul16_test.go)
		return tol16{2, 4, true}, tol16{2, 4, true}
	case "nn":
		// softmax, layer norm, cross-entropy: float32 inside, one
		// rounding; compositions (attention: matmul, scale, mask,
		// softmax, matmul) round between their ops on both sides, at
		// points that differ (PyTorch's fused kernels) and each rounding
		// of an intermediate near the result's scale moves it by u·scale
		return tol16{2, 4, true}, tol16{4, 8, true}
	}
	panic("unknown golden kind " + c.Kind)
}

// unit16 returns the unit roundoff of a 16-bit dtype.
func unit16(dt tensor.DType) float64 {
	if dt == tensor.Float16 {
		return 0x1p-11
	}
	return 0x1p-8
}

// ulpKey16 maps a 16-bit pattern to an integer whose order is the value's
// (±0 both 0), so that the difference of two keys counts the ulps between
// the values.
func ulpKey16(h uint16) int {
	if h&0x8000 != 0 {
		return -int(h & 0x7FFF)
	}
	return int(h)
}

// isNaN16 reports whether h is a NaN of dt.
func isNaN16(dt tensor.DType, h uint16) bool {
	if dt == tensor.Float16 {
		return h&0x7C00 == 0x7C00 && h&0x3FF != 0
	}
	return h&0x7F80 == 0x7F80 && h&0x7F != 0
}

// maxAbs16 returns the largest finite |value| of the float tensors.
func maxAbs16(ts ...*tensor.Tensor) float64 {
	m := 0.0
	for _, x := range ts {
		if x == nil || !x.DType().IsFloatingPoint() {
			continue
		}
		for _, v := range x.Float32s() {
			if a := math.Abs(float64(v)); a > m && !math.IsInf(a, 0) {
				m = a
			}
		}
	}
	return m
}

// ulps16 returns how many ulps of dt lie between the bit patterns g and w
// (0 for two NaNs or for ±0, math.MaxInt for a NaN and a number).
func ulps16(dt tensor.DType, g, w uint16) int {
	gn, wn := isNaN16(dt, g), isNaN16(dt, w)
	switch {
	case gn && wn, g == w, g&0x7FFF == 0 && w&0x7FFF == 0:
		return 0
	case gn || wn:
		return math.MaxInt
	}
	d := ulpKey16(g) - ulpKey16(w)
	if d < 0 {
		d = -d
	}
	return d
}

// diff16 is how far a 16-bit result is from PyTorch's (torch) and from the
// float64 reference rounded once (exact), in ulps, the largest over the
// elements; -1 when the bits are the same.
// rel is the largest |difference| from PyTorch's in units of u·scale.
type diff16 struct {
	torch, exact int
	rel          float64
}

// max returns the larger differences of d and o.
func (d diff16) max(o diff16) diff16 {
	return diff16{max(d.torch, o.torch), max(d.exact, o.exact), max(d.rel, o.rel)}
}

// noDiff16 is the diff16 of the same bits.
var noDiff16 = diff16{-1, -1, 0}

// compare16 compares a result with PyTorch's (want) and with the float64
// reference rounded once (exact; nil when its bits are want's). An element
// passes when it is within tol of PyTorch's (ulps ulps, or u·slack·scale
// with scale the largest |value| of the case's inputs, its upstream
// gradients and this result), or within one ulp of the exact reference:
// Wick computes each op in float32 and rounds once, so it may be closer to
// the exact result than PyTorch where PyTorch rounds intermediates.
func compare16(t *testing.T, what string, got *tensor.Tensor, want golden16Tensor, exact *golden16Tensor, tol tol16, scale, n float64) diff16 {
	t.Helper()
	res := noDiff16
	if got == nil {
		t.Errorf("%s: got nil, want a %s%v", what, want.DType, want.shape())
		return res
	}
	if !slices.Equal(got.Shape(), want.shape()) {
		t.Errorf("%s: shape %v, want %v", what, got.Shape(), want.shape())
		return res
	}
	if got.DType().String() != want.DType {
		t.Errorf("%s: dtype %s, want %s", what, got.DType(), want.DType)
		return res
	}
	switch want.DType {
	case "int64":
		if g := got.Ints(); !slices.Equal(g, want.Data) {
			t.Errorf("%s: got %v, want %v", what, g, want.Data)
		}
		return res
	case "float32":
		g, w := got.Float32s(), want.float32s(t)
		for i := range w {
			if g[i] != w[i] && !(g[i] != g[i] && w[i] != w[i]) {
				t.Errorf("%s: element %d = %v, want %v\n got  %v\n want %v", what, i, g[i], w[i], g, w)
				break
			}
		}
		return res
	}
	dt := got.DType()
	g, w := got.Bits16(), want.bits16(t)
	e := w
	if exact != nil {
		e = exact.bits16(t)
	}
	gotF := got.Detach().ToDType(tensor.Float32).Float32s()
	wantF := tensor.FromBits16(dt, w, len(w)).Float32s()
	scale = max(scale, maxAbs16(tensor.FromBits16(dt, w, len(w))))
	for i := range w {
		dt16, dex := ulps16(dt, g[i], w[i]), ulps16(dt, g[i], e[i])
		if dt16 > 0 {
			res.torch = max(res.torch, dt16)
		}
		if dex > 0 {
			res.exact = max(res.exact, dex)
		}
		diff := math.Abs(float64(gotF[i]) - float64(wantF[i]))
		if scale > 0 && !math.IsNaN(diff) && !math.IsInf(diff, 0) {
			res.rel = max(res.rel, diff/(unit16(dt)*scale))
		}
		if dt16 <= tol.ulps || diff <= unit16(dt)*tol.slack*n*scale || tol.exact && dex <= 1 {
			continue
		}
		ef := tensor.FromBits16(dt, e[i:i+1], 1).Float32s()[0]
		t.Errorf("%s: element %d = %v (%#04x), PyTorch %v (%#04x), float64 reference %v: %d ulps from PyTorch, allowed %d ulps or %g·u·%g·%g\n got  %v\n want %v",
			what, i, gotF[i], g[i], wantF[i], w[i], ef, dt16, tol.ulps, tol.slack, n, scale, gotF, wantF)
		break
	}
	return res
}

// golden16Result is the largest difference in ulps of a case's forward
// results and of its gradients (-1: the same bits).
type golden16Result struct{ fwd, bwd diff16 }

var (
	golden16Mu      sync.Mutex
	golden16Results map[string]golden16Result // of the last golden16Run
)

// golden16Extra are the ops of the 16-bit goldens only: gradients of a
// tensor used more than once, accumulated in its dtype (each gradient
// rounded, each sum rounded), as PyTorch's engine accumulates them.
var golden16Extra = map[string]goldenOp{
	"LeafTwice": func(x []*tensor.Tensor, _ goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Mul(x[1]).Add(x[0].Mul(x[2])))
	},
	"LeafThrice": func(x []*tensor.Tensor, _ goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Mul(x[1]).Add(x[0].Mul(x[2])).Add(x[0].Mul(x[3]).Sum(0)))
	},
	"NonLeafTwice": func(x []*tensor.Tensor, _ goldenArgs) []*tensor.Tensor {
		h := x[0].Exp()
		return goldenOne(h.Mul(x[1]).Add(h.Mul(x[2]).Sin()))
	},
}

// golden16Op returns the op of goldenOps or golden16Extra named name.
func golden16Op(name string) (goldenOp, bool) {
	if op, ok := goldenOps[name]; ok {
		return op, true
	}
	op, ok := golden16Extra[name]
	return op, ok
}

// golden16Run replays every 16-bit golden case as subtests of t and
// returns the differences of each case (keyed dtype/case name).
func golden16Run(t *testing.T) map[string]golden16Result {
	results := map[string]golden16Result{}
	for _, f := range loadGolden16(t) {
		t.Run(f.dt.String(), func(t *testing.T) {
			for i := range f.cases {
				c := &f.cases[i]
				t.Run(c.Name, func(t *testing.T) { results[f.dt.String()+"/"+c.Name] = runGolden16Case(t, f.dt, c) })
			}
		})
	}
	golden16Mu.Lock()
	golden16Results = results
	golden16Mu.Unlock()
	return results
}

// golden16Last returns the results of the last golden16Run, running it as
// subtests of t if none ran yet.
func golden16Last(t *testing.T) map[string]golden16Result {
	golden16Mu.Lock()
	r := golden16Results
	golden16Mu.Unlock()
	if r == nil {
		r = golden16Run(t)
	}
	return r
}

// TestGolden16 replays every 16-bit golden case on the CPU: forward
// results, then the gradient of every 16-bit base (a bfloat16 or float16
// leaf, its gradient in its own dtype) for the recorded upstream
// gradients.
func TestGolden16(t *testing.T) { golden16Run(t) }

// golden16Creation are the golden ops that only create tensors: no 16-bit
// case (they create float32 tensors, which ToDType converts).
var golden16Creation = map[string]bool{"Arange": true, "Eye": true, "Linspace": true}

// TestGolden16Coverage checks that every golden op but the creation ops
// has 16-bit cases in each dtype, with a backward case where it is
// differentiable, and that every case names an op of goldenOps.
func TestGolden16Coverage(t *testing.T) {
	for _, f := range loadGolden16(t) {
		fwd, bwd := map[string]bool{}, map[string]bool{}
		for _, c := range f.cases {
			if _, ok := golden16Op(c.Op); !ok {
				t.Errorf("%s case %s: no op %q in goldenOps or golden16Extra", f.dt, c.Name, c.Op)
			}
			fwd[c.Op] = true
			if c.Upstream != nil {
				bwd[c.Op] = true
			}
		}
		for op := range golden16Extra {
			if !bwd[op] {
				t.Errorf("%s: op %s has no backward case", f.dt, op)
			}
		}
		for op := range goldenOps {
			switch {
			case golden16Creation[op]:
			case !fwd[op]:
				t.Errorf("%s: op %s has no case", f.dt, op)
			case !bwd[op] && !goldenNoGrad[op] && op != "TopKTies":
				t.Errorf("%s: op %s has no backward case", f.dt, op)
			}
		}
	}
}

// golden16Coverage returns the section of testdata/golden/COVERAGE.md on
// the 16-bit goldens (TestGoldenCoverage writes and checks the file),
// from the results of TestGolden16 (run here if it has not run).
func golden16Coverage(t *testing.T) string {
	files := loadGolden16(t)
	results := golden16Last(t)
	var sb strings.Builder
	sb.WriteString("\n## bfloat16 and float16\n\n")
	sb.WriteString("TestGolden16 in tensor/golden16_test.go replays the cases above (all but the\n")
	sb.WriteString("creation ops) with bfloat16 and float16 inputs and leaves, against\n")
	sb.WriteString("testdata/golden/ops_bf16.json and ops_f16_bf16.json, written by\n")
	sb.WriteString("`/usr/bin/python3 scripts/gen_golden_bf16_ops.py` from PyTorch 1.13 on the CPU\n")
	sb.WriteString("in torch.bfloat16 and torch.float16, with the float64 result rounded once\n")
	sb.WriteString("beside it where its bits differ. The test's comment gives the tolerances.\n")
	for _, f := range files {
		n, ops := 0, map[string]bool{}
		for _, c := range f.cases {
			if c.Reference == "float64" {
				n++
				ops[c.Op] = true
			}
		}
		fwd, bwd, bwdAll := 0, 0, 0
		for _, c := range f.cases {
			r, ok := results[f.dt.String()+"/"+c.Name]
			if !ok {
				continue
			}
			if r.fwd.torch < 0 {
				fwd++
			}
			if c.Upstream != nil {
				bwdAll++
				if r.bwd.torch < 0 {
					bwd++
				}
			}
		}
		fmt.Fprintf(&sb, "\n%s: %d cases, forward bit-identical to the reference in %d, gradients in %d of %d", f.dt, len(f.cases), fwd, bwd, bwdAll)
		if n > 0 {
			names := slices.Sorted(maps.Keys(ops))
			fmt.Fprintf(&sb, "; %d of them against the float64 result rounded once, as PyTorch 1.13 has no %s CPU kernel for %s", n, f.dt, strings.Join(names, ", "))
		}
		sb.WriteString(".\n")
	}
	sb.WriteString(golden16Notes)
	sb.WriteString("\nThe ops whose results differ from PyTorch's by more than one ulp in some case\n")
	sb.WriteString("(the largest difference over their cases, and from the float64 result rounded\n")
	sb.WriteString("once), and why:\n\n")
	sb.WriteString(golden16Table(files, results))
	return sb.String()
}

func runGolden16Case(t *testing.T, dt tensor.DType, c *golden16Case) golden16Result {
	res := golden16Result{noDiff16, noDiff16}
	op, ok := golden16Op(c.Op)
	if !ok {
		t.Fatalf("no Go implementation of golden op %q", c.Op)
	}
	fwdTol, bwdTol := goldenTol16(c)
	var bases, xs []*tensor.Tensor
	for _, in := range c.Inputs {
		b := in.build(t)
		if in.RequiresGrad {
			b.RequiresGrad()
		}
		bases = append(bases, b)
		xs = append(xs, goldenApplyViews(t, b, in.Views))
	}
	var outs []*tensor.Tensor
	goldenTry(t, "forward", func() { outs = op(xs, goldenArgs{t, c.Args}) })
	if len(outs) != len(c.Outputs) {
		t.Fatalf("got %d outputs, want %d", len(outs), len(c.Outputs))
	}
	inScale := maxAbs16(bases...)
	for i, o := range outs {
		var ex *golden16Tensor
		if c.ExactOutputs != nil {
			ex = c.ExactOutputs[i]
		}
		res.fwd = res.fwd.max(compare16(t, fmt.Sprintf("forward output %d", i), o, c.Outputs[i], ex, fwdTol, inScale, 1))
	}
	if t.Failed() || c.Upstream == nil {
		return res
	}
	goldenTry(t, "backward", func() {
		if !c.Multi {
			if !outs[0].IsRequiringGrad() {
				t.Fatalf("output does not require grad; PyTorch's does")
			}
			outs[0].BackwardWith(c.Upstream[0].build(t))
			return
		}
		// several outputs: a float32 loss Σ (out·g).sum(), whose gradient
		// reaches each output through its cast as g itself (g holds
		// 16-bit values)
		var loss *tensor.Tensor
		for i, u := range c.Upstream {
			if u == nil {
				continue
			}
			if !outs[i].IsRequiringGrad() {
				t.Fatalf("output %d does not require grad; PyTorch's does", i)
			}
			term := outs[i].ToDType(tensor.Float32).Mul(u.build(t).ToDType(tensor.Float32)).Sum()
			if loss == nil {
				loss = term
			} else {
				loss = loss.Add(term)
			}
		}
		loss.Backward()
	})
	upScale, upNumel := 0.0, 0.0
	for _, u := range c.Upstream {
		if u != nil {
			upScale = max(upScale, maxAbs16(u.build(t)))
			upNumel = max(upNumel, float64(goldenNumel(u.shape())))
		}
	}
	for i, in := range c.Inputs {
		if len(in.Grad) == 0 {
			continue
		}
		got := bases[i].Grad()
		if string(in.Grad) == "null" {
			if got != nil {
				for _, v := range got.Float32s() {
					if v != 0 {
						t.Errorf("input %d: PyTorch has no gradient, got %v", i, got.Float32s())
						break
					}
				}
			}
			continue
		}
		var want golden16Tensor
		if err := json.Unmarshal(in.Grad, &want); err != nil {
			t.Fatalf("input %d grad: %v", i, err)
		}
		res.bwd = res.bwd.max(compare16(t, fmt.Sprintf("gradient of input %d", i), got, want, in.ExactGrad, bwdTol, max(inScale, upScale), max(1, upNumel/float64(max(got.Numel(), 1)))))
	}
	return res
}

// golden16Table returns the markdown table of the ops whose 16-bit results
// differ from PyTorch's by more than one ulp in some case, from the
// results of TestGolden16.
func golden16Table(files []golden16File, results map[string]golden16Result) string {
	type row struct {
		r     golden16Result
		cases int
	}
	rows := map[string]*row{}
	for _, f := range files {
		for _, c := range f.cases {
			r, ok := results[f.dt.String()+"/"+c.Name]
			if !ok || max(r.fwd.torch, r.bwd.torch) <= 1 {
				continue
			}
			k := f.dt.String() + " " + c.Op
			if rows[k] == nil {
				rows[k] = &row{r: golden16Result{noDiff16, noDiff16}}
			}
			rows[k].r = golden16Result{rows[k].r.fwd.max(r.fwd), rows[k].r.bwd.max(r.bwd)}
			rows[k].cases++
		}
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ulps := func(n int) string {
		switch {
		case n < 0:
			return "0"
		case n == math.MaxInt:
			return "NaN"
		}
		return fmt.Sprint(n)
	}
	var sb strings.Builder
	sb.WriteString("| dtype | op | cases | forward: ulps from PyTorch | ÷ u·scale | ulps from exact | backward: ulps from PyTorch | ÷ u·scale | ulps from exact | why |\n")
	sb.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, k := range keys {
		dt, op, _ := strings.Cut(k, " ")
		r := rows[k]
		why := golden16Why[op]
		if why == "" {
			why = "(not explained: add a line to golden16Why)"
		}
		fmt.Fprintf(&sb, "| %s | %s | %d | %s | %.1f | %s | %s | %.1f | %s | %s |\n", dt, op, r.cases,
			ulps(r.r.fwd.torch), r.r.fwd.rel, ulps(r.r.fwd.exact), ulps(r.r.bwd.torch), r.r.bwd.rel, ulps(r.r.bwd.exact), why)
	}
	return sb.String()
}

// golden16Notes is what scripts/gen_golden_bf16_ops.py measures of
// PyTorch 1.13's bfloat16 CPU ops (it prints the fractions), beside the
// cases.
const golden16Notes = `
What PyTorch 1.13 does in bfloat16 on the CPU, measured by the generator
against its float32 op rounded once (random 7×13 inputs, 100 draws): the same
bits for sum, amax, var, cumsum, cumprod, softmax, exp, sin, tanh and
(contiguous) GELU; other bits in part of the results for mean (the sum
rounded, then divided: 25%), logsumexp (24%), log_softmax (17%), layer_norm
(58%), cross_entropy (52%), rsqrt (8%) and GELU (tanh) (40%). Wick computes
each op in float32 and rounds once (the scalar operands of the elementwise
ops rounded to the dtype first, as PyTorch converts them), so it is
bit-identical to PyTorch where PyTorch rounds once, and within an ulp of the
exact result where PyTorch does not.
`

// golden16Why says why an op's 16-bit results may differ from PyTorch's by
// more than one ulp.
var golden16Why = map[string]string{
	"AttentionBlock":            "a composition of ops (layer norm, matmul, scale, mask, softmax, matmul, …) rounded between its ops on both sides, PyTorch's small bfloat16 matmuls rounding every partial sum too; elements that cancel to near 0 are many ulps apart while the difference stays a few u·scale",
	"ScaledDotProductAttention": "a composition of ops (layer norm, matmul, scale, mask, softmax, matmul, …) rounded between its ops on both sides, PyTorch's small bfloat16 matmuls rounding every partial sum too; elements that cancel to near 0 are many ulps apart while the difference stays a few u·scale",
	"OffsetPieces":              "a composition of ops (layer norm, matmul, scale, mask, softmax, matmul, …) rounded between its ops on both sides, PyTorch's small bfloat16 matmuls rounding every partial sum too; elements that cancel to near 0 are many ulps apart while the difference stays a few u·scale",
	"FanOut":                    "a composition of six elementwise ops rounded after each on both sides (float16: the reference rounds the whole composition once)",
	"CrossEntropy":              "PyTorch composes it of its 16-bit log-softmax (see LogSoftmax) and nll_loss, and differentiates through the rounded values; Wick computes loss and gradient in float32 and rounds once (the exact result)",
	"Cumprod":                   "PyTorch's derivative of cumprod is a composition of 16-bit ops (sums of products divided by the input); Wick's is float32, rounded once (the exact result)",
	"Div":                       "the divisor's gradient −g·a/b² is a composition of 16-bit ops on both sides (in other orders), summed over the broadcast dims",
	"Pow":                       "the gradients b·a^(b−1)·g and aᵇ·log a·g are compositions of 16-bit ops on both sides (in other orders), summed over the broadcast dims",
	"GELU":                      "PyTorch 1.13's vectorised bfloat16 GELU computes in float32 and rounds once, as Wick (bit-identical on contiguous inputs); its scalar loop (strided inputs, 0-d) rounds erf and each product of x·½·(1+erf(x/√2)), and a saturated GELU of −12 is 0 there, −2·10⁻³² in Wick (erfc in float32); the derivative likewise",
	"GELUTanh":                  "PyTorch 1.13's 16-bit GELU (tanh) rounds tanh and each product of its formula, vectorised or not, so a saturated value is 0 there; Wick rounds once; the derivative likewise",
	"Rsqrt":                     "PyTorch rounds √x before the reciprocal; the derivative −g·y³/2 uses the rounded y on both sides",
	"PowScalar":                 "PyTorch computes x³ as x·x·x and x^−½ as a rounded √x's reciprocal; the derivative s·x^(s−1)·g is a composition",
	"LayerNorm":                 "PyTorch 1.13's bfloat16 layer norm is not its float32 one rounded once (it differs in about 60% of the elements, by up to 3·u at unit scale); Wick's is; offset_scale: 100 + 0.01·randn rounds to 100 in every element, so the exact result is the bias (Wick's) while PyTorch's reaches 33; the gradients follow",
	"Softmax":                   "PyTorch's derivative uses the 16-bit output; Wick's the float32 one, rounded once (the exact result)",
	"LogSoftmax":                "PyTorch 1.13 computes x − max − r(log(r(Σ exp(x − max)))), r rounding to the 16-bit dtype (bit-identical in measurements), and its derivative from the 16-bit output; Wick computes in float32 and rounds once (the exact result)",
	"LogSumExp":                 "PyTorch 1.13 composes it of 16-bit ops and its derivative exp(x − lse) uses the rounded lse (large_values: lse near 1000, whose ulp is 4, makes its gradient 3 times the exact one); Wick computes in float32, rounds once (the exact result)",
	"MatMul":                    "PyTorch 1.13's small bfloat16 matmuls round every partial sum (tensor/matmul16_test.go); Wick sums in float32 and rounds once, within 2 ulps of the exact result",
	"Sub":                       "the gradient of an operand broadcast over two dims: PyTorch's 16-bit reduction over non-adjacent dims rounds between its passes; Wick sums in float32 and rounds once (the exact result)",
	"Sum":                       "a sum over non-adjacent dims: PyTorch's 16-bit reduction rounds between its passes; Wick sums in float32 and rounds once (the exact result)",
	"Var":                       "PyTorch's derivative 2/(n−1)·g·(x − mean) is a composition of 16-bit ops; Wick's is float32, rounded once (the exact result)",
	"Embedding":                 "rows picked more than once: PyTorch's float16 embedding backward adds them in float16; Wick adds in float32 and rounds once (the exact result)",
	"Exp":                       "the derivative g·y uses the rounded output y on both sides; the reference (no float16 kernel in torch) is float64 throughout",
	"Log":                       "the derivative g/x rounds once in Wick; the reference (no float16 kernel in torch) is float64 throughout, and x near 0 magnifies the rounding of g",
	"Sigmoid":                   "the derivative g·y·(1−y) uses the rounded output y, which cancels near saturation; the reference (no float16 kernel in torch) is float64 throughout",
	"Tanh":                      "the derivative g·(1−y²) uses the rounded output y, which cancels near saturation; the reference (no float16 kernel in torch) is float64 throughout",
}
