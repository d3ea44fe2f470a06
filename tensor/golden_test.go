package tensor_test

// Golden tests: every op's forward and backward against values produced by
// PyTorch. scripts/gen_golden.py (run with /usr/bin/python3, which has
// torch) writes testdata/golden/ops.json and ops_sort_gather_scan.json (the
// ops added later); this file replays each case with
// Wick and compares. The op names in the JSON are the keys of goldenOps.
//
// go test ./tensor/ -run TestGoldenCoverage -update-golden
// rewrites testdata/golden/COVERAGE.md from the cases.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/wickml/wick/internal/golden"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

const goldenCoveragePath = "../testdata/golden/COVERAGE.md"

// goldenPaths are the files of golden cases, read in this order.
var goldenPaths = []string{"../testdata/golden/ops.json", "../testdata/golden/ops_sort_gather_scan.json"}

// goldenData is a list of numbers; non-finite floats are the strings "NaN",
// "Infinity" and "-Infinity".
type goldenData []string

func (d *goldenData) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var raw []any
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("golden data: %w", err)
	}
	out := make(goldenData, len(raw))
	for i, v := range raw {
		switch v := v.(type) {
		case json.Number:
			out[i] = v.String()
		case string:
			out[i] = v
		default:
			return fmt.Errorf("golden data: element %d has type %T", i, v)
		}
	}
	*d = out
	return nil
}

func (d goldenData) floats(t *testing.T) []float32 {
	t.Helper()
	out := make([]float32, len(d))
	for i, s := range d {
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			t.Fatalf("golden data: %v", err)
		}
		out[i] = float32(v)
	}
	return out
}

func (d goldenData) ints(t *testing.T) []int {
	t.Helper()
	out := make([]int, len(d))
	for i, s := range d {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("golden data: %v", err)
		}
		out[i] = v
	}
	return out
}

type goldenTensor struct {
	DType string     `json:"dtype"`
	Shape []int      `json:"shape"`
	Data  goldenData `json:"data"`
}

type goldenInput struct {
	goldenTensor
	RequiresGrad bool                         `json:"requires_grad"`
	Views        []map[string]json.RawMessage `json:"views"`
	Contiguous   *bool                        `json:"contiguous"`
	// Grad is absent when no backward ran, null when PyTorch left the
	// gradient unset (no path from the loss), else the base's gradient.
	Grad json.RawMessage `json:"grad"`
}

type goldenCase struct {
	Name          string                     `json:"name"`
	Op            string                     `json:"op"`
	Kind          string                     `json:"kind"`
	Args          map[string]json.RawMessage `json:"args"`
	Inputs        []goldenInput              `json:"inputs"`
	Outputs       []goldenTensor             `json:"outputs"`
	Multi         bool                       `json:"multi"`
	Upstream      []*goldenData              `json:"upstream"`
	SharesStorage []*bool                    `json:"shares_storage"`
}

var (
	goldenOnce  sync.Once
	goldenCases []goldenCase
	goldenErr   error
)

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	goldenOnce.Do(func() {
		for _, path := range goldenPaths {
			b, err := os.ReadFile(path)
			if err != nil {
				goldenErr = fmt.Errorf("reading golden values (regenerate with /usr/bin/python3 scripts/gen_golden.py): %w", err)
				return
			}
			var f struct {
				Cases []goldenCase `json:"cases"`
			}
			if err := json.Unmarshal(b, &f); err != nil {
				goldenErr = fmt.Errorf("parsing %s: %w", path, err)
				return
			}
			goldenCases = append(goldenCases, f.Cases...)
		}
	})
	if goldenErr != nil {
		t.Fatal(goldenErr)
	}
	return goldenCases
}

// goldenArgs reads a case's scalar arguments.
type goldenArgs struct {
	t *testing.T
	m map[string]json.RawMessage
}

func (a goldenArgs) has(k string) bool {
	v, ok := a.m[k]
	return ok && string(v) != "null"
}

func (a goldenArgs) get(k string, dst any) {
	a.t.Helper()
	v, ok := a.m[k]
	if !ok {
		a.t.Fatalf("golden case has no argument %q", k)
	}
	if err := json.Unmarshal(v, dst); err != nil {
		a.t.Fatalf("golden argument %q: %v", k, err)
	}
}

func (a goldenArgs) int(k string) int {
	var v int
	a.get(k, &v)
	return v
}

func (a goldenArgs) ints(k string) []int {
	if !a.has(k) {
		return nil
	}
	var v []int
	a.get(k, &v)
	return v
}

func (a goldenArgs) bool(k string) bool {
	if !a.has(k) {
		return false
	}
	var v bool
	a.get(k, &v)
	return v
}

// unmarshalScalar reads one number (or NaN/Infinity string).
func (d *goldenData) unmarshalScalar(b []byte) error {
	return d.UnmarshalJSON(append(append([]byte("["), b...), ']'))
}

// floatArg reads a float argument: a bare number or a NaN/Infinity string.
func (a goldenArgs) floatArg(k string) float32 {
	a.t.Helper()
	v, ok := a.m[k]
	if !ok {
		a.t.Fatalf("golden case has no argument %q", k)
	}
	var d goldenData
	if err := d.unmarshalScalar(v); err != nil {
		a.t.Fatalf("golden argument %q: %v", k, err)
	}
	return d.floats(a.t)[0]
}

type goldenOp func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor

func goldenOne(t *tensor.Tensor) []*tensor.Tensor { return []*tensor.Tensor{t} }

func goldenUnary(f func(*tensor.Tensor) *tensor.Tensor) goldenOp {
	return func(x []*tensor.Tensor, _ goldenArgs) []*tensor.Tensor { return goldenOne(f(x[0])) }
}

func goldenScalar(f func(*tensor.Tensor, float32) *tensor.Tensor) goldenOp {
	return func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor { return goldenOne(f(x[0], a.floatArg("s"))) }
}

func goldenBinary(f func(*tensor.Tensor, *tensor.Tensor) *tensor.Tensor) goldenOp {
	return func(x []*tensor.Tensor, _ goldenArgs) []*tensor.Tensor { return goldenOne(f(x[0], x[1])) }
}

// goldenReduce runs a reduction over args "dims" (none: all elements),
// keeping them when "keep" is set.
func goldenReduce(f, keep func(*tensor.Tensor, ...int) *tensor.Tensor) goldenOp {
	return func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		if a.bool("keep") {
			return goldenOne(keep(x[0], a.ints("dims")...))
		}
		return goldenOne(f(x[0], a.ints("dims")...))
	}
}

var goldenOps = map[string]goldenOp{
	"Neg":      goldenUnary((*tensor.Tensor).Neg),
	"Exp":      goldenUnary((*tensor.Tensor).Exp),
	"Log":      goldenUnary((*tensor.Tensor).Log),
	"Sqrt":     goldenUnary((*tensor.Tensor).Sqrt),
	"Rsqrt":    goldenUnary((*tensor.Tensor).Rsqrt),
	"Abs":      goldenUnary((*tensor.Tensor).Abs),
	"Sign":     goldenUnary((*tensor.Tensor).Sign),
	"Square":   goldenUnary((*tensor.Tensor).Square),
	"Tanh":     goldenUnary((*tensor.Tensor).Tanh),
	"Sigmoid":  goldenUnary((*tensor.Tensor).Sigmoid),
	"ReLU":     goldenUnary((*tensor.Tensor).ReLU),
	"GELU":     goldenUnary((*tensor.Tensor).GELU),
	"GELUTanh": goldenUnary((*tensor.Tensor).GELUTanh),
	"Sin":      goldenUnary((*tensor.Tensor).Sin),
	"Cos":      goldenUnary((*tensor.Tensor).Cos),

	"AddScalar":  goldenScalar((*tensor.Tensor).AddScalar),
	"SubScalar":  goldenScalar((*tensor.Tensor).SubScalar),
	"RSubScalar": goldenScalar((*tensor.Tensor).RSubScalar),
	"MulScalar":  goldenScalar((*tensor.Tensor).MulScalar),
	"DivScalar":  goldenScalar((*tensor.Tensor).DivScalar),
	"PowScalar":  goldenScalar((*tensor.Tensor).PowScalar),
	"EqScalar":   goldenScalar((*tensor.Tensor).EqScalar),
	"GtScalar":   goldenScalar((*tensor.Tensor).GtScalar),
	"LtScalar":   goldenScalar((*tensor.Tensor).LtScalar),
	"Clamp": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Clamp(a.floatArg("lo"), a.floatArg("hi")))
	},

	"Add":     goldenBinary((*tensor.Tensor).Add),
	"Sub":     goldenBinary((*tensor.Tensor).Sub),
	"Mul":     goldenBinary((*tensor.Tensor).Mul),
	"Div":     goldenBinary((*tensor.Tensor).Div),
	"Pow":     goldenBinary((*tensor.Tensor).Pow),
	"Maximum": goldenBinary((*tensor.Tensor).Maximum),
	"Minimum": goldenBinary((*tensor.Tensor).Minimum),
	"Eq":      goldenBinary((*tensor.Tensor).Eq),
	"Ne":      goldenBinary((*tensor.Tensor).Ne),
	"Lt":      goldenBinary((*tensor.Tensor).Lt),
	"Le":      goldenBinary((*tensor.Tensor).Le),
	"Gt":      goldenBinary((*tensor.Tensor).Gt),
	"Ge":      goldenBinary((*tensor.Tensor).Ge),
	"Where": func(x []*tensor.Tensor, _ goldenArgs) []*tensor.Tensor {
		return goldenOne(tensor.Where(x[0], x[1], x[2]))
	},
	"MaskedFill": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].MaskedFill(x[1], a.floatArg("value")))
	},

	"Sum":       goldenReduce((*tensor.Tensor).Sum, (*tensor.Tensor).SumKeepDim),
	"Mean":      goldenReduce((*tensor.Tensor).Mean, (*tensor.Tensor).MeanKeepDim),
	"Max":       goldenReduce((*tensor.Tensor).Max, (*tensor.Tensor).MaxKeepDim),
	"Min":       goldenReduce((*tensor.Tensor).Min, (*tensor.Tensor).MinKeepDim),
	"Var":       goldenReduce((*tensor.Tensor).Var, (*tensor.Tensor).VarKeepDim),
	"LogSumExp": goldenReduce((*tensor.Tensor).LogSumExp, (*tensor.Tensor).LogSumExpKeepDim),
	"ArgMax": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		switch {
		case !a.has("dim"):
			return goldenOne(x[0].ArgMax())
		case a.bool("keep"):
			return goldenOne(x[0].ArgMaxKeepDim(a.int("dim")))
		}
		return goldenOne(x[0].ArgMax(a.int("dim")))
	},
	"ArgMin": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		if !a.has("dim") {
			return goldenOne(x[0].ArgMin())
		}
		return goldenOne(x[0].ArgMin(a.int("dim")))
	},

	"MatMul": goldenBinary((*tensor.Tensor).MatMul),

	"Softmax": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Softmax(a.int("dim")))
	},
	"LogSoftmax": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].LogSoftmax(a.int("dim")))
	},
	"LayerNorm": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		var w, b *tensor.Tensor
		next := 1
		if a.bool("weight") {
			w = x[next]
			next++
		}
		if a.bool("bias") {
			b = x[next]
		}
		return goldenOne(x[0].LayerNorm(w, b, a.floatArg("eps")))
	},
	"Dropout": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Dropout(a.floatArg("p"), a.bool("training")))
	},
	"IndexSelect": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].IndexSelect(a.int("dim"), x[1]))
	},
	"Embedding": func(x []*tensor.Tensor, _ goldenArgs) []*tensor.Tensor {
		return goldenOne(tensor.Embedding(x[0], x[1]))
	},
	"CrossEntropy": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		if a.has("ignore") {
			return goldenOne(tensor.CrossEntropyIgnore(x[0], x[1], a.int("ignore")))
		}
		return goldenOne(tensor.CrossEntropy(x[0], x[1]))
	},
	"Tril": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor { return goldenOne(x[0].Tril(a.int("k"))) },
	"Triu": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor { return goldenOne(x[0].Triu(a.int("k"))) },
	"Cat": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(tensor.Cat(x, a.int("dim")))
	},
	"Stack": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(tensor.Stack(x, a.int("dim")))
	},
	"Split": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return x[0].Split(a.int("size"), a.int("dim"))
	},
	"Chunk": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return x[0].Chunk(a.int("n"), a.int("dim"))
	},
	"ScaledDotProductAttention": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(tensor.ScaledDotProductAttention(x[0], x[1], x[2], a.bool("causal")))
	},

	"Reshape": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Reshape(a.ints("shape")...))
	},
	"View": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].View(a.ints("shape")...))
	},
	"Permute": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Permute(a.ints("dims")...))
	},
	"Transpose": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Transpose(a.int("d0"), a.int("d1")))
	},
	"T": goldenUnary((*tensor.Tensor).T),
	"Slice": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Slice(a.int("dim"), a.int("start"), a.int("end")))
	},
	"Narrow": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Narrow(a.int("dim"), a.int("start"), a.int("length")))
	},
	"Select": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Select(a.int("dim"), a.int("index")))
	},
	"Expand": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Expand(a.ints("shape")...))
	},
	"Squeeze": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Squeeze(a.ints("dims")...))
	},
	"Unsqueeze": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Unsqueeze(a.int("dim")))
	},
	"Flatten": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Flatten(a.ints("range")...))
	},
	"Contiguous": goldenUnary((*tensor.Tensor).Contiguous),
	"Clone":      goldenUnary((*tensor.Tensor).Clone),

	"Arange": func(_ []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(tensor.Arange(a.floatArg("start"), a.floatArg("end"), a.floatArg("step")))
	},
	"Eye": func(_ []*tensor.Tensor, a goldenArgs) []*tensor.Tensor { return goldenOne(tensor.Eye(a.int("n"))) },
	"Linspace": func(_ []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(tensor.Linspace(a.floatArg("start"), a.floatArg("end"), a.int("steps")))
	},

	"Sort": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		v, i := x[0].Sort(a.int("dim"), a.bool("descending"))
		return []*tensor.Tensor{v, i}
	},
	"TopK": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		v, i := x[0].TopK(a.int("k"), a.int("dim"), a.bool("largest"), true)
		return []*tensor.Tensor{v, i}
	},
	// with ties: the values, and what the indices pick (PyTorch's CPU
	// topk orders tied indices in no particular way)
	"TopKTies": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		v, i := x[0].TopK(a.int("k"), a.int("dim"), a.bool("largest"), true)
		return []*tensor.Tensor{v, x[0].Gather(a.int("dim"), i)}
	},
	"Gather": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Gather(a.int("dim"), x[1]))
	},
	"Scatter": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Scatter(a.int("dim"), x[1], x[2]))
	},
	"ScatterAdd": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].ScatterAdd(a.int("dim"), x[1], x[2]))
	},
	"Cumsum": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Cumsum(a.int("dim")))
	},
	"Cumprod": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		return goldenOne(x[0].Cumprod(a.int("dim")))
	},

	// issue 2's case: q = k = arange(4).view(2,2); loss = (q @ k.T).sum()
	"IssueViewPermute": func(x []*tensor.Tensor, _ goldenArgs) []*tensor.Tensor {
		q := x[0].View(2, 2)
		k := q
		return goldenOne(q.MatMul(k.T()).Sum())
	},
	// one tensor used several times, through views
	"FanOut": func(x []*tensor.Tensor, _ goldenArgs) []*tensor.Tensor {
		v := x[0]
		y := v.View(-1)
		z := v.T()
		return goldenOne(v.Mul(v).Add(v.Exp().Mul(v)).Add(y.View(v.Shape()...).Mul(z.T()).Sin()))
	},
	// Split along dim 0 gives views at nonzero offsets, and Cat's backward
	// hands each piece a gradient view at a nonzero offset.
	"OffsetPieces": func(x []*tensor.Tensor, _ goldenArgs) []*tensor.Tensor {
		p := x[0].Split(2, 0)
		return goldenOne(tensor.Cat([]*tensor.Tensor{p[0].Exp(), p[1].Softmax(-1), p[2].LayerNorm(nil, nil, 1e-5)}, 0).Tanh())
	},
	// layer norm, projection, head split, causal attention, merge, residual
	"AttentionBlock": func(x []*tensor.Tensor, a goldenArgs) []*tensor.Tensor {
		in, w, wln, bln := x[0], x[1], x[2], x[3]
		s := in.Shape()
		b, tt, c := s[0], s[1], s[2]
		h := a.int("heads")
		qkv := in.LayerNorm(wln, bln, 1e-5).MatMul(w).Split(c, 2)
		heads := func(u *tensor.Tensor) *tensor.Tensor { return u.View(b, tt, h, c/h).Transpose(1, 2) }
		o := tensor.ScaledDotProductAttention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), true)
		o = o.Transpose(1, 2).Contiguous().View(b, tt, c)
		return goldenOne(o.Add(in).GELU())
	},
}

// goldenTol returns (rtol, atol) for a kind of op: 1e-5 relative for
// elementwise ops and views, 1e-4 for reductions, matmuls and nn ops
// (docs/design.md, rule 7), with a small absolute floor for values near zero.
func goldenTol(kind string) (float64, float64) {
	switch kind {
	case "elementwise", "view":
		return approx.ElementwiseRTol, approx.ElementwiseATol
	case "reduce", "matmul", "nn":
		return approx.ReduceRTol, approx.ReduceATol
	}
	panic("unknown golden kind " + kind)
}

func goldenNumel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// goldenNew builds a contiguous base tensor (0-d when shape is empty).
func goldenNew(t *testing.T, in goldenTensor) *tensor.Tensor {
	t.Helper()
	shape := in.Shape
	if shape == nil {
		shape = []int{}
	}
	var x *tensor.Tensor
	switch in.DType {
	case "float32":
		x = tensor.New(in.Data.floats(t), goldenNumel(shape)).Reshape(shape...)
	case "int64":
		x = tensor.FromInts(in.Data.ints(t), goldenNumel(shape)).Reshape(shape...)
	default:
		t.Fatalf("unknown dtype %q", in.DType)
	}
	if !slices.Equal(x.Shape(), shape) {
		t.Fatalf("built a tensor of shape %v for %v", x.Shape(), shape)
	}
	return x
}

// goldenApplyViews applies the JSON view steps with Wick's own view ops.
func goldenApplyViews(t *testing.T, x *tensor.Tensor, views []map[string]json.RawMessage) *tensor.Tensor {
	t.Helper()
	for _, v := range views {
		for k, raw := range v {
			var p []int
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatalf("view step %s: %v", k, err)
			}
			switch k {
			case "permute":
				x = x.Permute(p...)
			case "transpose":
				x = x.Transpose(p[0], p[1])
			case "slice":
				x = x.Slice(p[0], p[1], p[2])
			case "expand":
				x = x.Expand(p...)
			case "select":
				x = x.Select(p[0], p[1])
			case "view":
				x = x.View(p...)
			default:
				t.Fatalf("unknown view step %q", k)
			}
		}
	}
	return x
}

// goldenInputs builds the bases (leaves) and the tensors the op receives.
func goldenInputs(t *testing.T, c *goldenCase) (bases, xs []*tensor.Tensor) {
	t.Helper()
	for i, in := range c.Inputs {
		b := goldenNew(t, in.goldenTensor)
		if in.RequiresGrad {
			b.RequiresGrad()
		}
		x := goldenApplyViews(t, b, in.Views)
		if in.Contiguous != nil && x.IsContiguous() != *in.Contiguous {
			t.Errorf("input %d: after views %s, IsContiguous() = %v, PyTorch says %v (shape %v strides %v)",
				i, viewsString(in.Views), x.IsContiguous(), *in.Contiguous, x.Shape(), x.Strides())
		}
		bases = append(bases, b)
		xs = append(xs, x)
	}
	return bases, xs
}

func viewsString(views []map[string]json.RawMessage) string {
	var parts []string
	for _, v := range views {
		for k, raw := range v {
			parts = append(parts, k+string(raw))
		}
	}
	return strings.Join(parts, ".")
}

func goldenCompare(t *testing.T, what string, got *tensor.Tensor, want goldenTensor, rtol, atol float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: got nil, want shape %v", what, want.Shape)
		return
	}
	wantShape := want.Shape
	if wantShape == nil {
		wantShape = []int{}
	}
	if !slices.Equal(got.Shape(), wantShape) {
		t.Errorf("%s: shape %v, want %v", what, got.Shape(), wantShape)
		return
	}
	if want.DType == "int64" {
		if got.DType() != tensor.Int64 {
			t.Errorf("%s: dtype %s, want int64", what, got.DType())
			return
		}
		if g, w := got.Ints(), want.Data.ints(t); !slices.Equal(g, w) {
			t.Errorf("%s: got %v, want %v", what, g, w)
		}
		return
	}
	if got.DType() != tensor.Float32 {
		t.Errorf("%s: dtype %s, want float32", what, got.DType())
		return
	}
	g, w := got.Float32s(), want.Data.floats(t)
	if i := approx.Index(g, w, rtol, atol); i >= 0 {
		t.Errorf("%s: element %d (of %d) = %v, want %v (rtol %g, atol %g)\n got  %v\n want %v", what, i, len(w), g[i], w[i], rtol, atol, g, w)
	}
}

// goldenTry runs f and turns any panic (an *tensor.Error or a runtime
// error such as an index out of range) into a failure of this case only.
func goldenTry(t *testing.T, what string, f func()) {
	t.Helper()
	failed := true
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s panicked: %v\n%s", what, r, debug.Stack())
			}
		}()
		f()
		failed = false
	}()
	if failed {
		t.FailNow()
	}
}

// TestGolden replays every PyTorch case: forward outputs, then the gradient
// of every base for loss = Σ (out·g).sum() with the recorded upstream g.
func TestGolden(t *testing.T) { testGoldenOn(t, tensor.CPU) }

// testGoldenOn replays every golden case with dev as the default device:
// inputs, upstream gradients and created tensors live there, so every op
// and every derivative runs on dev; outputs and gradients are read back to
// compare. (golden_cuda_test.go runs the cases on a GPU.)
func testGoldenOn(t *testing.T, dev tensor.Device) {
	cases := loadGolden(t)
	if len(cases) == 0 {
		t.Fatal("no golden cases")
	}
	if err := tensor.SetDefaultDevice(dev); err != nil {
		t.Fatal(err)
	}
	defer tensor.SetDefaultDevice(tensor.CPU)
	for i := range cases {
		c := &cases[i]
		t.Run(c.Name, func(t *testing.T) { runGoldenCase(t, c) })
	}
}

func runGoldenCase(t *testing.T, c *goldenCase) {
	op, ok := goldenOps[c.Op]
	if !ok {
		t.Fatalf("no Go implementation of golden op %q", c.Op)
	}
	rtol, atol := goldenTol(c.Kind)
	fwdRtol, fwdAtol := rtol, atol
	if c.Kind == "view" {
		fwdRtol, fwdAtol = 0, 0 // views and copies move values exactly
	}
	bases, xs := goldenInputs(t, c)
	var outs []*tensor.Tensor
	goldenTry(t, "forward", func() { outs = op(xs, goldenArgs{t, c.Args}) })
	if len(outs) != len(c.Outputs) {
		t.Fatalf("got %d outputs, want %d", len(outs), len(c.Outputs))
	}
	for i, o := range outs {
		goldenCompare(t, fmt.Sprintf("forward output %d", i), o, c.Outputs[i], fwdRtol, fwdAtol)
	}
	for i, sh := range c.SharesStorage {
		if sh == nil {
			continue
		}
		if got := outs[i].Storage() == xs[0].Storage(); got != *sh {
			t.Errorf("output %d shares the input's storage: %v, PyTorch: %v", i, got, *sh)
		}
	}
	if t.Failed() || c.Upstream == nil {
		for i, o := range outs {
			if c.Upstream == nil && o.IsRequiringGrad() {
				t.Errorf("output %d requires grad but PyTorch's does not", i)
			}
		}
		return
	}

	// backward
	var loss *tensor.Tensor
	goldenTry(t, "backward", func() {
		if !c.Multi {
			g := goldenNew(t, goldenTensor{DType: "float32", Shape: c.Outputs[0].Shape, Data: *c.Upstream[0]})
			if !outs[0].IsRequiringGrad() {
				t.Fatalf("output does not require grad; PyTorch's does")
			}
			outs[0].BackwardWith(g)
			return
		}
		for i, u := range c.Upstream {
			if u == nil {
				continue
			}
			if !outs[i].IsRequiringGrad() {
				t.Fatalf("output %d does not require grad; PyTorch's does", i)
			}
			g := goldenNew(t, goldenTensor{DType: "float32", Shape: c.Outputs[i].Shape, Data: *u})
			term := outs[i].Mul(g).Sum()
			if loss == nil {
				loss = term
			} else {
				loss = loss.Add(term)
			}
		}
		loss.Backward()
	})
	for i, in := range c.Inputs {
		if len(in.Grad) == 0 {
			continue
		}
		got := bases[i].Grad()
		if string(in.Grad) == "null" {
			// PyTorch left it unset: no path from the loss. Accept nil or zeros.
			if got != nil && approx.Index(got.Float32s(), make([]float32, got.Numel()), 0, 0) >= 0 {
				t.Errorf("input %d: PyTorch has no gradient, got %v", i, got.Float32s())
			}
			continue
		}
		var want goldenData
		if err := json.Unmarshal(in.Grad, &want); err != nil {
			t.Fatalf("input %d grad: %v", i, err)
		}
		goldenCompare(t, fmt.Sprintf("gradient of input %d", i), got, goldenTensor{DType: "float32", Shape: in.Shape, Data: want}, rtol, atol)
	}
}

// goldenCoverageRow summarises what the golden cases check for one op.
type goldenCoverageRow struct {
	cases, fwd, bwd                         int
	nonContig, stride0, bcast, empty, zeroD bool
}

// goldenRequiredOps are the ops of the tensor list in docs/design.md (the public surface) (and the rest of
// the API in the preamble); each must have a golden case.
var goldenRequiredOps = []string{
	"Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum",
	"AddScalar", "SubScalar", "RSubScalar", "MulScalar", "DivScalar", "PowScalar",
	"Neg", "Exp", "Log", "Sqrt", "Rsqrt", "Abs", "Sign", "Square", "Tanh", "Sigmoid", "ReLU", "GELU", "GELUTanh", "Sin", "Cos",
	"Eq", "Ne", "Lt", "Le", "Gt", "Ge", "EqScalar", "GtScalar", "LtScalar", "Where", "MaskedFill", "Clamp",
	"Sum", "Mean", "Max", "Min", "ArgMax", "ArgMin", "Var", "LogSumExp",
	"MatMul",
	"Softmax", "LogSoftmax", "Dropout", "LayerNorm", "IndexSelect", "Embedding", "CrossEntropy",
	"Tril", "Triu", "Cat", "Stack", "Split", "Chunk", "ScaledDotProductAttention",
	"Reshape", "View", "Permute", "Transpose", "T", "Slice", "Narrow", "Select", "Expand", "Squeeze", "Unsqueeze", "Flatten", "Contiguous", "Clone",
	"Arange", "Eye", "Linspace",
	"Sort", "TopK", "Gather", "Scatter", "ScatterAdd", "Cumsum", "Cumprod",
}

// goldenBroadcastOps are the ops whose inputs broadcast against each other.
var goldenBroadcastOps = map[string]bool{
	"Add": true, "Sub": true, "Mul": true, "Div": true, "Pow": true, "Maximum": true, "Minimum": true,
	"Eq": true, "Ne": true, "Lt": true, "Le": true, "Gt": true, "Ge": true,
	"Where": true, "MaskedFill": true, "MatMul": true, "ScaledDotProductAttention": true,
}

// goldenNoGrad are the ops whose results are not differentiable.
var goldenNoGrad = map[string]bool{
	"Eq": true, "Ne": true, "Lt": true, "Le": true, "Gt": true, "Ge": true,
	"EqScalar": true, "GtScalar": true, "LtScalar": true, "ArgMax": true, "ArgMin": true,
	"Arange": true, "Eye": true, "Linspace": true,
}

func goldenCoverage(t *testing.T, cases []goldenCase) map[string]*goldenCoverageRow {
	rows := map[string]*goldenCoverageRow{}
	for i := range cases {
		c := &cases[i]
		r := rows[c.Op]
		if r == nil {
			r = &goldenCoverageRow{}
			rows[c.Op] = r
		}
		r.cases++
		r.fwd++
		for _, in := range c.Inputs {
			if len(in.Grad) > 0 && string(in.Grad) != "null" {
				r.bwd++
				break
			}
		}
		_, xs := goldenInputs(t, c)
		var floatShapes [][]int
		for j, x := range xs {
			if !x.IsContiguous() {
				r.nonContig = true
			}
			if slices.Contains(x.Strides(), 0) && x.Numel() > 1 {
				r.stride0 = true
			}
			if x.Numel() == 0 {
				r.empty = true
			}
			if x.Dim() == 0 {
				r.zeroD = true
			}
			if c.Inputs[j].DType == "float32" {
				floatShapes = append(floatShapes, x.Shape())
			}
		}
		for _, o := range c.Outputs {
			if slices.Contains(o.Shape, 0) {
				r.empty = true
			}
		}
		if len(floatShapes) >= 2 && goldenBroadcastOps[c.Op] {
			out := c.Outputs[0].Shape
			for _, s := range floatShapes {
				if c.Op == "MatMul" || c.Op == "ScaledDotProductAttention" {
					// batch dims broadcast: compare everything but the matrix dims
					if len(s) > 2 && len(out) >= 2 && !slices.Equal(s[:len(s)-2], out[:len(out)-2]) {
						r.bcast = true
					}
					if len(s) == 2 && len(out) > 2 {
						r.bcast = true
					}
					continue
				}
				if !slices.Equal(s, out) {
					r.bcast = true
				}
			}
		}
	}
	return rows
}

func goldenCoverageMarkdown(rows map[string]*goldenCoverageRow) string {
	ops := make([]string, 0, len(rows))
	for op := range rows {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	mark := func(b bool) string {
		if b {
			return "✓"
		}
		return ""
	}
	var sb strings.Builder
	sb.WriteString("# Golden coverage of tensor ops\n\n")
	sb.WriteString("Generated by `go test ./tensor/ -run TestGoldenCoverage -update-golden`\n")
	sb.WriteString("from testdata/golden/ops.json and ops_sort_gather_scan.json (written by\n")
	sb.WriteString("`/usr/bin/python3 scripts/gen_golden.py` from PyTorch). Every case below is\n")
	sb.WriteString("replayed by TestGolden in tensor/golden_test.go: forward outputs always, and\n")
	sb.WriteString("the gradient of every float input for a random upstream gradient where the\n")
	sb.WriteString("op is differentiable. TestGoldenCoverage fails if this file is stale.\n\n")
	sb.WriteString("Columns: cases; cases whose forward is checked; cases whose backward is\n")
	sb.WriteString("checked; and whether some case feeds a non-contiguous input, an input with a\n")
	sb.WriteString("stride-0 (expanded) dim, broadcasting between inputs (batch dims for\n")
	sb.WriteString("MatMul/attention), a size-0 dim, a 0-d tensor.\n\n")
	sb.WriteString("| op | cases | forward | backward | non-contiguous | stride 0 | broadcast | empty | 0-d |\n")
	sb.WriteString("|---|---:|---:|---:|:-:|:-:|:-:|:-:|:-:|\n")
	total, fwd, bwd := 0, 0, 0
	for _, op := range ops {
		r := rows[op]
		b := strconv.Itoa(r.bwd)
		if goldenNoGrad[op] {
			b = "n/a"
		}
		fmt.Fprintf(&sb, "| %s | %d | %d | %s | %s | %s | %s | %s | %s |\n", op, r.cases, r.fwd, b,
			mark(r.nonContig), mark(r.stride0), mark(r.bcast), mark(r.empty), mark(r.zeroD))
		total += r.cases
		fwd += r.fwd
		bwd += r.bwd
	}
	fmt.Fprintf(&sb, "| **all %d ops** | %d | %d | %d | | | | | |\n", len(ops), total, fwd, bwd)
	return sb.String()
}

// TestGoldenCoverage checks that every op has golden cases, forward and (if
// differentiable) backward, and that COVERAGE.md is up to date.
func TestGoldenCoverage(t *testing.T) {
	cases := loadGolden(t)
	rows := goldenCoverage(t, cases)
	for _, op := range goldenRequiredOps {
		r := rows[op]
		switch {
		case r == nil:
			t.Errorf("op %s has no golden case", op)
		case !goldenNoGrad[op] && r.bwd == 0:
			t.Errorf("op %s has no golden backward case", op)
		}
	}
	for op := range goldenOps {
		if rows[op] == nil {
			t.Errorf("golden op %s is implemented in the test but has no case", op)
		}
	}
	golden.Check(t, goldenCoveragePath, goldenCoverageMarkdown(rows)+golden16Coverage(t))
}
