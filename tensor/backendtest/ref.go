package backendtest

import (
	"math"

	"github.com/wickml/wick/tensor"
)

// The float64 references of the elementwise kernels, written out from the
// definitions (PyTorch's, and tensor/backend.go's for the special values:
// ReLU and Clamp keep NaN, Sign(NaN) is 0, Maximum and Minimum propagate
// NaN, comparisons with NaN are false but Ne).

const sqrt2overPi = 0.7978845608028654

// unaryRef returns op's function in float64.
func unaryRef(op tensor.UnaryOp, p tensor.UnaryParams) func(x float64) float64 {
	a, b := float64(p.A), float64(p.B)
	switch op {
	case tensor.OpNeg:
		return func(x float64) float64 { return -x }
	case tensor.OpExp:
		return math.Exp
	case tensor.OpLog:
		return math.Log
	case tensor.OpSqrt:
		return math.Sqrt
	case tensor.OpRsqrt:
		return func(x float64) float64 { return 1 / math.Sqrt(x) }
	case tensor.OpAbs:
		return math.Abs
	case tensor.OpTanh:
		return math.Tanh
	case tensor.OpSigmoid:
		return func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	case tensor.OpReLU:
		return func(x float64) float64 {
			if x > 0 || x != x {
				return x
			}
			return 0
		}
	case tensor.OpGELU:
		return func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
	case tensor.OpGELUTanh:
		return func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(sqrt2overPi*(x+0.044715*x*x*x))) }
	case tensor.OpSin:
		return math.Sin
	case tensor.OpCos:
		return math.Cos
	case tensor.OpAddScalar:
		return func(x float64) float64 { return x + a }
	case tensor.OpMulScalar:
		return func(x float64) float64 { return x * a }
	case tensor.OpDivScalar:
		return func(x float64) float64 { return x / a }
	case tensor.OpRSubScalar:
		return func(x float64) float64 { return a - x }
	case tensor.OpPowScalar:
		return func(x float64) float64 { return math.Pow(x, a) }
	case tensor.OpClamp:
		return func(x float64) float64 {
			if x != x {
				return x
			}
			return min(max(x, a), b)
		}
	case tensor.OpSign:
		return func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		}
	case tensor.OpSquare:
		return func(x float64) float64 { return x * x }
	}
	panic("backendtest: no reference for unary op " + op.String())
}

// unaryGradRef returns g·f'(x) given x and y = f(x) (y rounded to float32,
// as a backend's forward kernel would have saved it), and the size of the
// terms the result is formed from (its rounding scale). GELU's derivatives
// are sums of terms of size ~|g| (Φ(x) or ½(1 + tanh), x·φ(x)) that cancel
// in the tails, so their scale is |g|·(1 + |x·φ(x)|).
func unaryGradRef(op tensor.UnaryOp, p tensor.UnaryParams) func(g, x, y float64) (want, scale float64) {
	a, b := float64(p.A), float64(p.B)
	same := func(v float64) (float64, float64) { return v, math.Abs(v) }
	switch op {
	case tensor.OpNeg:
		return func(g, x, y float64) (float64, float64) { return same(-g) }
	case tensor.OpExp:
		return func(g, x, y float64) (float64, float64) { return same(g * y) }
	case tensor.OpLog:
		return func(g, x, y float64) (float64, float64) { return same(g / x) }
	case tensor.OpSqrt:
		return func(g, x, y float64) (float64, float64) { return same(g / (2 * y)) }
	case tensor.OpRsqrt:
		return func(g, x, y float64) (float64, float64) { return same(-0.5 * g * y * y * y) }
	case tensor.OpAbs:
		return func(g, x, y float64) (float64, float64) {
			switch {
			case x > 0:
				return g, 0
			case x < 0:
				return -g, 0
			}
			return 0, 0
		}
	case tensor.OpTanh:
		return func(g, x, y float64) (float64, float64) { return g * (1 - y*y), math.Abs(g) }
	case tensor.OpSigmoid:
		return func(g, x, y float64) (float64, float64) { return g * (1 - y) * y, math.Abs(g) }
	case tensor.OpReLU:
		// PyTorch's threshold_backward: zero where y ≤ 0, so a NaN input
		// passes the gradient through
		return func(g, x, y float64) (float64, float64) {
			if y <= 0 {
				return 0, 0
			}
			return g, 0
		}
	case tensor.OpGELU:
		return func(g, x, y float64) (float64, float64) {
			cdf := 0.5 * (1 + math.Erf(x/math.Sqrt2))
			pdf := math.Exp(-0.5*x*x) / math.Sqrt(2*math.Pi)
			return g * (cdf + x*pdf), math.Abs(g) * (1 + math.Abs(x*pdf))
		}
	case tensor.OpGELUTanh:
		return func(g, x, y float64) (float64, float64) {
			th := math.Tanh(sqrt2overPi * (x + 0.044715*x*x*x))
			d := sqrt2overPi * (1 + 3*0.044715*x*x)
			s1, s2 := 0.5*(1+th), 0.5*x*(1-th*th)*d
			return g * (s1 + s2), math.Abs(g) * (1 + math.Abs(s2))
		}
	case tensor.OpSin:
		return func(g, x, y float64) (float64, float64) { return same(g * math.Cos(x)) }
	case tensor.OpCos:
		return func(g, x, y float64) (float64, float64) { return same(-g * math.Sin(x)) }
	case tensor.OpAddScalar:
		return func(g, x, y float64) (float64, float64) { return g, 0 }
	case tensor.OpMulScalar:
		return func(g, x, y float64) (float64, float64) { return same(g * a) }
	case tensor.OpDivScalar:
		return func(g, x, y float64) (float64, float64) { return same(g / a) }
	case tensor.OpRSubScalar:
		return func(g, x, y float64) (float64, float64) { return -g, 0 }
	case tensor.OpPowScalar:
		return func(g, x, y float64) (float64, float64) {
			if a == 0 {
				return 0, 0
			}
			return same(g * a * math.Pow(x, a-1))
		}
	case tensor.OpClamp:
		return func(g, x, y float64) (float64, float64) {
			if x >= a && x <= b {
				return g, 0
			}
			return 0, 0
		}
	case tensor.OpSign:
		return func(g, x, y float64) (float64, float64) { return 0, 0 }
	case tensor.OpSquare:
		return func(g, x, y float64) (float64, float64) { return same(2 * x * g) }
	}
	panic("backendtest: no reference for the derivative of unary op " + op.String())
}

// binaryRef returns op's function of two float32 values, in float64 (a
// float32 sum, difference, product or quotient rounds to the float64
// result's nearest float32).
func binaryRef(op tensor.BinaryOp) func(a, b float32) float64 {
	b2f := func(c bool) float64 {
		if c {
			return 1
		}
		return 0
	}
	switch op {
	case tensor.OpAdd:
		return func(a, b float32) float64 { return float64(a) + float64(b) }
	case tensor.OpSub:
		return func(a, b float32) float64 { return float64(a) - float64(b) }
	case tensor.OpMul:
		return func(a, b float32) float64 { return float64(a) * float64(b) }
	case tensor.OpDiv:
		return func(a, b float32) float64 { return float64(a) / float64(b) }
	case tensor.OpPow:
		return func(a, b float32) float64 { return math.Pow(float64(a), float64(b)) }
	case tensor.OpMaximum:
		return func(a, b float32) float64 {
			if a != a || b != b {
				return math.NaN()
			}
			return float64(max(a, b))
		}
	case tensor.OpMinimum:
		return func(a, b float32) float64 {
			if a != a || b != b {
				return math.NaN()
			}
			return float64(min(a, b))
		}
	case tensor.OpEq:
		return func(a, b float32) float64 { return b2f(a == b) }
	case tensor.OpNe:
		return func(a, b float32) float64 { return b2f(a != b) }
	case tensor.OpLt:
		return func(a, b float32) float64 { return b2f(a < b) }
	case tensor.OpLe:
		return func(a, b float32) float64 { return b2f(a <= b) }
	case tensor.OpGt:
		return func(a, b float32) float64 { return b2f(a > b) }
	case tensor.OpGe:
		return func(a, b float32) float64 { return b2f(a >= b) }
	}
	panic("backendtest: no reference for binary op " + op.String())
}

// intCompareRef is a comparison of two int64 values, 1 or 0.
func intCompareRef(op tensor.BinaryOp, a, b int64) float32 {
	var c bool
	switch op {
	case tensor.OpEq:
		c = a == b
	case tensor.OpNe:
		c = a != b
	case tensor.OpLt:
		c = a < b
	case tensor.OpLe:
		c = a <= b
	case tensor.OpGt:
		c = a > b
	case tensor.OpGe:
		c = a >= b
	default:
		panic("backendtest: int64 tensors support only comparisons, not " + op.String())
	}
	if c {
		return 1
	}
	return 0
}
