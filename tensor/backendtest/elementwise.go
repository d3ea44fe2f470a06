package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/tensor"
)

// unaryCase is a tensor.UnaryOp with parameters and an input domain.
type unaryCase struct {
	op     tensor.UnaryOp
	p      tensor.UnaryParams
	lo, hi float64 // input range; 0, 0 for standard normal ·3
}

// unaryCases lists every tensor.UnaryOp (TestUnaryOpsCovered checks).
var unaryCases = []unaryCase{
	{tensor.OpNeg, tensor.UnaryParams{}, 0, 0},
	{tensor.OpExp, tensor.UnaryParams{}, 0, 0},
	{tensor.OpLog, tensor.UnaryParams{}, 0.01, 10},
	{tensor.OpSqrt, tensor.UnaryParams{}, 0, 10},
	{tensor.OpRsqrt, tensor.UnaryParams{}, 0.01, 10},
	{tensor.OpAbs, tensor.UnaryParams{}, 0, 0},
	{tensor.OpTanh, tensor.UnaryParams{}, 0, 0},
	{tensor.OpSigmoid, tensor.UnaryParams{}, 0, 0},
	{tensor.OpReLU, tensor.UnaryParams{}, 0, 0},
	{tensor.OpGELU, tensor.UnaryParams{}, 0, 0},
	{tensor.OpGELUTanh, tensor.UnaryParams{}, 0, 0},
	{tensor.OpSin, tensor.UnaryParams{}, 0, 0},
	{tensor.OpCos, tensor.UnaryParams{}, 0, 0},
	{tensor.OpAddScalar, tensor.UnaryParams{A: 1.5}, 0, 0},
	{tensor.OpMulScalar, tensor.UnaryParams{A: -2.25}, 0, 0},
	{tensor.OpDivScalar, tensor.UnaryParams{A: 3}, 0, 0},
	{tensor.OpRSubScalar, tensor.UnaryParams{A: 0.5}, 0, 0},
	{tensor.OpPowScalar, tensor.UnaryParams{A: 2.5}, 0.01, 4},
	{tensor.OpPowScalar, tensor.UnaryParams{A: -1.5}, 0.1, 4},
	{tensor.OpPowScalar, tensor.UnaryParams{A: 0}, 0, 0},
	{tensor.OpClamp, tensor.UnaryParams{A: -0.5, B: 1}, 0, 0},
	{tensor.OpSign, tensor.UnaryParams{}, 0, 0},
	{tensor.OpSquare, tensor.UnaryParams{}, 0, 0},
}

// unaryInput draws n inputs for op's domain, with a few special values
// (±0, ±Inf, NaN) mixed in when special is set.
func unaryInput(r *rand.Rand, n int, lo, hi float64, special bool) []float32 {
	var x []float32
	if lo == 0 && hi == 0 {
		x = randn(r, n)
		for i := range x {
			x[i] *= 3
		}
	} else {
		x = randIn(r, n, lo, hi)
	}
	if special {
		sp := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
		for i := range x {
			if r.IntN(16) == 0 {
				x[i] = sp[r.IntN(len(sp))]
			}
		}
	}
	return x
}

func testUnary(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, c := range unaryCases {
		f := unaryRef(c.op, c.p)
		for _, kind := range viewKinds {
			for _, big := range []bool{false, true} {
				shape := randomShape(r, 4, 7)
				if big {
					shape = []int{3, 257, 129}
				}
				v := makeView(r, shape, kind)
				name := fmt.Sprintf("%v(A=%v,B=%v)/%s/%v", c.op, c.p.A, c.p.B, kindNames[kind], v)
				x := unaryInput(r, v.n, c.lo, c.hi, !big)
				n := numel(shape)
				dst := poisoned(b, tensor.Float32, n)
				b.Unary(c.op, c.p, dst, b.FromFloat32s(x), v.l)
				want := make([]float64, n)
				for i, xv := range gatherView(x, v.l) {
					want[i] = f(float64(xv))
				}
				// the floor is for results near zero, such as GELU's
				// tail, where a float32 approximation may differ from
				// x·Φ(x) by far less than 1e-8 (torch.allclose's atol)
				checkRel(t, name, read(b, dst), want, elemRel, 1e-8)
			}
		}
	}
}

func testUnaryGrad(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, c := range unaryCases {
		f, df := unaryRef(c.op, c.p), unaryGradRef(c.op, c.p)
		for _, n := range []int{1, 37, 70001} {
			x := unaryInput(r, n, c.lo, c.hi, true)
			y := make([]float32, n)
			for i, v := range x {
				y[i] = float32(f(float64(v)))
			}
			g := randn(r, n)
			dst := poisoned(b, tensor.Float32, n)
			b.UnaryGrad(c.op, c.p, dst, b.FromFloat32s(g), b.FromFloat32s(x), b.FromFloat32s(y), n)
			want, allowed := make([]float64, n), make([]float64, n)
			for i := range x {
				w, scale := df(float64(g[i]), float64(x[i]), float64(y[i]))
				want[i] = w
				// g·f'(x) is a difference of O(1) terms for GELU (zero
				// at x ≈ −0.75); computed in float32 it carries their
				// rounding, a few u of the terms' size (scale)
				allowed[i] = elemRel*math.Abs(w) + 8*u*scale
			}
			checkBound(t, fmt.Sprintf("%vGrad(A=%v)/n=%d", c.op, c.p.A, n), read(b, dst), want, allowed)
		}
	}
}

func testBinary(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, op := range tensor.BinaryOps() {
		for _, ka := range viewKinds {
			for _, kb := range viewKinds {
				shape := randomShape(r, 5, 6)
				if ka == contig && kb == contig {
					shape = []int{2, 300, 131} // the vectorised paths
				}
				va, vb := makeView(r, shape, ka), makeView(r, shape, kb)
				var xa, xb []float32
				if op == tensor.OpPow {
					xa, xb = randIn(r, va.n, 0.1, 3), randIn(r, vb.n, -2, 2)
				} else {
					// small integers make equal pairs (comparisons) common
					xa, xb = randIn(r, va.n, -3, 3), randIn(r, vb.n, -3, 3)
					for _, x := range [][]float32{xa, xb} {
						for i := range x {
							if r.IntN(3) == 0 {
								x[i] = float32(math.Round(float64(x[i])))
							}
						}
					}
					if va.n > 2 {
						xa[1] = float32(math.NaN())
					}
				}
				n := numel(shape)
				dst := poisoned(b, tensor.Float32, n)
				b.Binary(op, dst, b.FromFloat32s(xa), va.l, b.FromFloat32s(xb), vb.l)
				f := binaryRef(op)
				ga, gb := gatherView(xa, va.l), gatherView(xb, vb.l)
				want := make([]float64, n)
				for i := range want {
					want[i] = f(ga[i], gb[i])
				}
				checkRel(t, fmt.Sprintf("%v/%s %v/%s %v", op, kindNames[ka], va, kindNames[kb], vb), read(b, dst), want, elemRel, 0)
			}
		}
	}
}

func testCompareInt64(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, op := range tensor.BinaryOps() {
		if !op.IsComparison() {
			continue
		}
		for _, ka := range viewKinds {
			for _, kb := range viewKinds {
				shape := randomShape(r, 4, 6)
				va, vb := makeView(r, shape, ka), makeView(r, shape, kb)
				ia, ib := make([]int64, va.n), make([]int64, vb.n)
				for i := range ia {
					ia[i] = int64(r.IntN(5)) - 2 + 1<<40 // beyond float32's integers
				}
				for i := range ib {
					ib[i] = int64(r.IntN(5)) - 2 + 1<<40
				}
				dst := poisoned(b, tensor.Float32, numel(shape))
				b.Binary(op, dst, b.FromInt64s(ia), va.l, b.FromInt64s(ib), vb.l)
				ga, gb := gatherView(ia, va.l), gatherView(ib, vb.l)
				want := make([]float32, len(ga))
				for i := range want {
					want[i] = intCompareRef(op, ga[i], gb[i])
				}
				checkExact(t, fmt.Sprintf("int64 %v/%v/%v", op, va, vb), read(b, dst), want)
			}
		}
	}
}

func testWhere(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, kc := range viewKinds {
		for _, ka := range viewKinds {
			for _, kb := range viewKinds {
				shape := randomShape(r, 4, 6)
				vc, va, vb := makeView(r, shape, kc), makeView(r, shape, ka), makeView(r, shape, kb)
				cond := make([]float32, vc.n)
				for i := range cond {
					switch r.IntN(4) {
					case 0:
						cond[i] = 1
					case 1:
						cond[i] = float32(math.NaN()) // nonzero: true
					case 2:
						cond[i] = -0.5
					}
				}
				xa, xb := randn(r, va.n), randn(r, vb.n)
				dst := poisoned(b, tensor.Float32, numel(shape))
				b.Where(dst, b.FromFloat32s(cond), vc.l, b.FromFloat32s(xa), va.l, b.FromFloat32s(xb), vb.l)
				gc, ga, gb := gatherView(cond, vc.l), gatherView(xa, va.l), gatherView(xb, vb.l)
				want := make([]float32, len(gc))
				for i, c := range gc {
					if c != 0 {
						want[i] = ga[i]
					} else {
						want[i] = gb[i]
					}
				}
				checkExact(t, fmt.Sprintf("Where/%v/%v/%v", vc, va, vb), read(b, dst), want)
			}
		}
	}
}

// testManyDims checks views of eight dims laid out in reversed memory order
// (no two merge), with and without broadcast dims: more dims than a kernel
// launch may take at once (six for the CUDA backend's, which splits such
// views into several launches).
func testManyDims(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	shape := []int{2, 3, 2, 3, 2, 3, 2, 3}
	rev := make([]int, len(shape))
	s := 1
	for d := range shape {
		rev[d] = s
		s *= shape[d]
	}
	bc := append([]int{}, rev...)
	bc[1], bc[4] = 0, 0
	n := numel(shape)
	for _, st := range [][]int{rev, bc} {
		va := view{tensor.Layout{Shape: shape, Strides: st, Offset: 1}, n + 1}
		vb := view{tensor.Layout{Shape: shape, Strides: rev}, n}
		if cs, _ := tensor.Collapse(shape, tensor.ContiguousStrides(shape), va.l.Strides); len(cs) <= 6 {
			t.Fatalf("layout %v merges into %d dims; the check needs more than 6", va, len(cs))
		}
		xa, xb := randn(r, va.n), randn(r, vb.n)
		a := b.FromFloat32s(xa)
		ga, gb := gatherView(xa, va.l), gatherView(xb, vb.l)
		dst := poisoned(b, tensor.Float32, n)
		b.Binary(tensor.OpMul, dst, a, va.l, b.FromFloat32s(xb), vb.l)
		want := make([]float32, n)
		for i := range want {
			want[i] = ga[i] * gb[i]
		}
		checkExact(t, fmt.Sprintf("Mul/%v/%v", va, vb), read(b, dst), want)
		dst = poisoned(b, tensor.Float32, n)
		b.Unary(tensor.OpExp, tensor.UnaryParams{}, dst, a, va.l)
		wexp := make([]float64, n)
		for i, v := range ga {
			wexp[i] = math.Exp(float64(v))
		}
		checkRel(t, fmt.Sprintf("Exp/%v", va), read(b, dst), wexp, elemRel, 0)
		dst = poisoned(b, tensor.Float32, n)
		b.Copy(dst, contiguous(shape), a, va.l)
		checkExact(t, fmt.Sprintf("Copy/%v", va), read(b, dst), ga)
	}
}
