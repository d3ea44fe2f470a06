//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/tensor"
)

// unaryOps lists every tensor.UnaryOp with parameters and an input domain.
var unaryOps = []struct {
	op     tensor.UnaryOp
	p      tensor.UnaryParams
	lo, hi float64 // input range; 0, 0 for standard normal ·3
}{
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

func TestUnaryOpsCovered(t *testing.T) {
	seen := map[tensor.UnaryOp]bool{}
	for _, u := range unaryOps {
		seen[u.op] = true
	}
	for op := tensor.OpNeg; op <= tensor.OpSquare; op++ {
		if !seen[op] {
			t.Errorf("unary op %v is not tested", op)
		}
	}
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

func TestUnary(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for _, u := range unaryOps {
		for _, kind := range viewKinds {
			for _, big := range []bool{false, true} {
				shape := randomShape(r, 4, 7)
				if big {
					shape = []int{3, 257, 129}
				}
				v := makeView(r, shape, kind)
				name := fmt.Sprintf("%v(A=%v,B=%v)/%s/%v", u.op, u.p.A, u.p.B, kindNames[kind], v)
				src := upload(g, c, unaryInput(r, v.n, u.lo, u.hi, !big))
				n := numel(shape)
				dst := poisoned(g, c, tensor.Float32, n)
				g.Unary(u.op, u.p, dst.g, src.g, v.l)
				c.Unary(u.op, u.p, dst.c, src.c, v.l)
				gv, cv := dst.read(g, c)
				compare(t, name, gv, cv, elementwiseTol)
			}
		}
	}
}

func TestUnaryGrad(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for _, u := range unaryOps {
		for _, n := range []int{1, 37, 70001} {
			x := unaryInput(r, n, u.lo, u.hi, true)
			xs := upload(g, c, x)
			y := c.Alloc(tensor.Float32, n)
			c.Unary(u.op, u.p, y, xs.c, whole(n))
			ys := upload(g, c, c.Float32s(y, whole(n)))
			gs := upload(g, c, randn(r, n))
			dst := poisoned(g, c, tensor.Float32, n)
			g.UnaryGrad(u.op, u.p, dst.g, gs.g, xs.g, ys.g, n)
			c.UnaryGrad(u.op, u.p, dst.c, gs.c, xs.c, ys.c, n)
			gv, cv := dst.read(g, c)
			compare(t, fmt.Sprintf("%vGrad(A=%v)/n=%d", u.op, u.p.A, n), gv, cv, cancelTol)
		}
	}
}

func TestBinary(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for op := tensor.OpAdd; op <= tensor.OpGe; op++ {
		for _, ka := range viewKinds {
			for _, kb := range viewKinds {
				shape := randomShape(r, 5, 6)
				if ka == contig && kb == contig {
					shape = []int{2, 300, 131} // several blocks on the fast path
				}
				va, vb := makeView(r, shape, ka), makeView(r, shape, kb)
				var xa, xb []float32
				if op == tensor.OpPow {
					xa, xb = randIn(r, va.n, 0.1, 3), randIn(r, vb.n, -2, 2)
				} else {
					// small integers make equal pairs (comparisons) common
					xa, xb = randIn(r, va.n, -3, 3), randIn(r, vb.n, -3, 3)
					for i := range xa {
						if r.IntN(3) == 0 {
							xa[i] = float32(math.Round(float64(xa[i])))
						}
					}
					for i := range xb {
						if r.IntN(3) == 0 {
							xb[i] = float32(math.Round(float64(xb[i])))
						}
					}
					if va.n > 2 {
						xa[1] = float32(math.NaN())
					}
				}
				a, b := upload(g, c, xa), upload(g, c, xb)
				n := numel(shape)
				dst := poisoned(g, c, tensor.Float32, n)
				g.Binary(op, dst.g, a.g, va.l, b.g, vb.l)
				c.Binary(op, dst.c, a.c, va.l, b.c, vb.l)
				gv, cv := dst.read(g, c)
				compare(t, fmt.Sprintf("%v/%s %v/%s %v", op, kindNames[ka], va, kindNames[kb], vb), gv, cv, elementwiseTol)
			}
		}
	}
}

func TestCompareInt64(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for op := tensor.OpEq; op <= tensor.OpGe; op++ {
		for _, ka := range viewKinds {
			for _, kb := range viewKinds {
				shape := randomShape(r, 4, 6)
				va, vb := makeView(r, shape, ka), makeView(r, shape, kb)
				ia, ib := make([]int64, va.n), make([]int64, vb.n)
				for i := range ia {
					ia[i] = int64(r.IntN(5)) - 2 + 1<<40
				}
				for i := range ib {
					ib[i] = int64(r.IntN(5)) - 2 + 1<<40
				}
				a, b := uploadInts(g, c, ia), uploadInts(g, c, ib)
				dst := poisoned(g, c, tensor.Float32, numel(shape))
				g.Binary(op, dst.g, a.g, va.l, b.g, vb.l)
				c.Binary(op, dst.c, a.c, va.l, b.c, vb.l)
				gv, cv := dst.read(g, c)
				compare(t, fmt.Sprintf("int64 %v/%v/%v", op, va, vb), gv, cv, elementwiseTol)
			}
		}
	}
}

func TestWhere(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
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
				cs, a, b := upload(g, c, cond), upload(g, c, randn(r, va.n)), upload(g, c, randn(r, vb.n))
				dst := poisoned(g, c, tensor.Float32, numel(shape))
				g.Where(dst.g, cs.g, vc.l, a.g, va.l, b.g, vb.l)
				c.Where(dst.c, cs.c, vc.l, a.c, va.l, b.c, vb.l)
				gv, cv := dst.read(g, c)
				compare(t, fmt.Sprintf("Where/%v/%v/%v", vc, va, vb), gv, cv, elementwiseTol)
			}
		}
	}
}

// TestManyDims checks views with more dims than one launch takes (they are
// split into several launches): dims laid out in reversed memory order do
// not merge.
func TestManyDims(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
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
		if cs, _ := tensor.Collapse(shape, tensor.ContiguousStrides(shape), va.l.Strides); len(cs) <= maxD {
			t.Fatalf("layout %v merges into %d dims; the test needs more than %d", va, len(cs), maxD)
		}
		a, b := upload(g, c, randn(r, va.n)), upload(g, c, randn(r, vb.n))
		dst := poisoned(g, c, tensor.Float32, n)
		g.Binary(tensor.OpMul, dst.g, a.g, va.l, b.g, vb.l)
		c.Binary(tensor.OpMul, dst.c, a.c, va.l, b.c, vb.l)
		gv, cv := dst.read(g, c)
		compare(t, fmt.Sprintf("Mul/%v/%v", va, vb), gv, cv, elementwiseTol)
		dst = poisoned(g, c, tensor.Float32, n)
		g.Unary(tensor.OpExp, tensor.UnaryParams{}, dst.g, a.g, va.l)
		c.Unary(tensor.OpExp, tensor.UnaryParams{}, dst.c, a.c, va.l)
		gv, cv = dst.read(g, c)
		compare(t, fmt.Sprintf("Exp/%v", va), gv, cv, elementwiseTol)
		dst = poisoned(g, c, tensor.Float32, n)
		g.Copy(dst.g, contiguous(shape), a.g, va.l)
		c.Copy(dst.c, contiguous(shape), a.c, va.l)
		gv, cv = dst.read(g, c)
		compare(t, fmt.Sprintf("Copy/%v", va), gv, cv, elementwiseTol)
	}
}
