package tensor

import (
	"math"

	"github.com/wickml/wick/internal/kernels"
)

// This file is the one place where a unary elementwise op is defined: its
// constant, its name, its forward function and its derivative for the CPU
// backend, the CPU fast paths that serve it, and the same forward and
// derivative in CUDA C. `go generate ./cuda` writes the CUDA enum and the
// kernels' switches (csrc/unary_ops.cuh) from this file with
// internal/cudagen, so the two backends cannot disagree on the order or
// the set of ops. Adding an op: a constant below, a row in unaryOps, a
// method in elementwise.go, then `go generate ./cuda`.

// UnaryOp names an elementwise function of one tensor (and scalar
// parameters) that every backend implements.
type UnaryOp int

// The elementwise functions of one argument. Scalar parameters come in
// UnaryParams: A for AddScalar/MulScalar/DivScalar/PowScalar/comparisons,
// A and B for Clamp (min, max).
const (
	OpNeg UnaryOp = iota
	OpExp
	OpLog
	OpSqrt
	OpRsqrt
	OpAbs
	OpTanh
	OpSigmoid
	OpReLU
	OpGELU     // exact: x·Φ(x)
	OpGELUTanh // tanh approximation
	OpSin
	OpCos
	OpAddScalar // x + A
	OpMulScalar // x · A
	OpDivScalar // x / A
	OpRSubScalar
	OpPowScalar // x ^ A
	OpClamp     // min(max(x, A), B)
	OpSign
	OpSquare
)

// String returns the op's name, such as "Exp".
func (op UnaryOp) String() string { return unaryOps[op].name }

// UnaryParams are the scalar parameters of a UnaryOp.
type UnaryParams struct{ A, B float32 }

// unaryDef is one row of the unary op table: everything a backend needs to
// know about one UnaryOp.
type unaryDef struct {
	// name is the op's name (UnaryOp.String, error messages; the CUDA
	// enum constant is WICK_ and the name in capitals).
	name string

	// fwd is op(x) as the CPU backend computes it: transcendental
	// functions in float64, rounded once; plain arithmetic in float32.
	fwd func(x float32, p UnaryParams) float32
	// grad is g·op′(x), given x and y = op(x), as the CPU backend
	// computes it.
	grad func(g, x, y float32, p UnaryParams) float32
	// ref and refGrad, where set, are the float64 formulas that fwd and
	// grad approximate in float32 arithmetic (cpu_fast_test.go bounds the
	// difference); the CUDA kernels compute these.
	ref     func(x float32) float32
	refGrad func(g, x float32) float32

	// The CPU fast paths. loop is fwd over a run of elements with stride
	// st, written out for the ops of every training step so that no call
	// is made per element (without it the backend calls fwd per element);
	// it equals fwd element by element. vec computes fwd over the longest
	// prefix that the vector kernels of internal/kernels take where the
	// processor runs them (AVX-512 blocks of 16, then AVX2 blocks of 8)
	// and returns its length (0 on the pure-Go path); vecGrad computes grad
	// likewise (without y, so only for ops whose derivative does not read
	// it). In
	// a row with ref the kernels approximate ref in float32 as fwd and
	// grad do (cpu_fast_test.go bounds them against ref); in a row without
	// ref (Exp, Tanh, Sigmoid) they are within 1 ulp of fwd, not always
	// equal: Exp's work in float32 and differ from fwd by 1 ulp for about
	// 1 input in 400 (the correctly rounded value's neighbour); Tanh's and
	// Sigmoid's work in float64 and round once, as fwd does, and differ
	// only where their float64 value and math's straddle a float32
	// rounding boundary (none of the 2³² float32 inputs did when
	// measured). unary_fast_test.go checks the bound and counts the
	// differences. The AVX-512 and AVX2 kernels of a row give the same
	// bits; the Go tail after them gives fwd's.
	loop    func(d, s []float32, st int, p UnaryParams)
	vec     func(dst, x []float32) int
	vecGrad func(dst, g, x []float32) int

	// cu and cuGrad are fwd (or ref where set) and grad in CUDA C, which
	// go generate copies into csrc/unary_ops.cuh. Each is an expression,
	// or statements that end in a return, in float x and double v
	// (= x), the parameters float a and b (UnaryParams.A and B), and for
	// cuGrad float g and y = op(x). csrc/elementwise.cu defines the
	// constants WICK_SQRT2, WICK_SQRT2_OVER_PI and WICK_PI.
	cu, cuGrad string
}

// sqrt2overPi is √(2/π), the scale of GELU's tanh approximation.
const sqrt2overPi = 0.7978845608028654

// unaryOps is the unary op table, one row per UnaryOp.
var unaryOps = [...]unaryDef{
	OpNeg: {
		name: "Neg",
		fwd:  func(x float32, p UnaryParams) float32 { return -x },
		grad: func(g, x, y float32, p UnaryParams) float32 { return -g },
		cu:   "-x", cuGrad: "-g",
	},
	OpExp: {
		name: "Exp",
		fwd:  func(x float32, p UnaryParams) float32 { return float32(math.Exp(float64(x))) },
		grad: func(g, x, y float32, p UnaryParams) float32 { return g * y },
		vec:  kernels.ExpVec,
		cu:   "(float)exp(v)", cuGrad: "g * y",
	},
	OpLog: {
		name: "Log",
		fwd:  func(x float32, p UnaryParams) float32 { return float32(math.Log(float64(x))) },
		grad: func(g, x, y float32, p UnaryParams) float32 { return g / x },
		cu:   "(float)log(v)", cuGrad: "g / x",
	},
	OpSqrt: {
		name: "Sqrt",
		fwd:  func(x float32, p UnaryParams) float32 { return float32(math.Sqrt(float64(x))) },
		grad: func(g, x, y float32, p UnaryParams) float32 { return g / (2 * y) },
		cu:   "(float)sqrt(v)", cuGrad: "g / (2.0f * y)",
	},
	OpRsqrt: {
		name: "Rsqrt",
		fwd:  func(x float32, p UnaryParams) float32 { return float32(1 / math.Sqrt(float64(x))) },
		grad: func(g, x, y float32, p UnaryParams) float32 { return -0.5 * g * y * y * y },
		cu:   "(float)(1.0 / sqrt(v))", cuGrad: "-0.5f * g * y * y * y",
	},
	OpAbs: { // the derivative at 0 is 0, as in PyTorch
		name: "Abs",
		fwd:  func(x float32, p UnaryParams) float32 { return float32(math.Abs(float64(x))) },
		grad: func(g, x, y float32, p UnaryParams) float32 {
			switch {
			case x > 0:
				return g
			case x < 0:
				return -g
			}
			return 0
		},
		cu: "fabsf(x)", cuGrad: "x > 0.0f ? g : (x < 0.0f ? -g : 0.0f)",
	},
	OpTanh: {
		name: "Tanh",
		fwd:  func(x float32, p UnaryParams) float32 { return float32(math.Tanh(float64(x))) },
		grad: func(g, x, y float32, p UnaryParams) float32 { return g * (1 - y*y) },
		vec:  kernels.TanhVec,
		cu:   "(float)tanh(v)", cuGrad: "g * (1.0f - y * y)",
	},
	OpSigmoid: {
		name: "Sigmoid",
		fwd:  func(x float32, p UnaryParams) float32 { return kernels.Sigmoid32(x) },
		grad: func(g, x, y float32, p UnaryParams) float32 { return g * (1 - y) * y },
		vec:  kernels.SigmoidVec,
		cu:   "(float)(1.0 / (1.0 + exp(-v)))", cuGrad: "g * (1.0f - y) * y",
	},
	OpReLU: { // NaN stays NaN
		name: "ReLU",
		fwd:  func(x float32, p UnaryParams) float32 { return max(x, 0) },
		// PyTorch's threshold_backward: zero where y <= 0 (so a NaN
		// input passes the gradient through)
		grad: func(g, x, y float32, p UnaryParams) float32 {
			if y <= 0 {
				return 0
			}
			return g
		},
		loop: func(d, s []float32, st int, p UnaryParams) {
			for k := range d {
				d[k] = max(s[k*st], 0)
			}
		},
		cu: "x != x ? x : (x > 0.0f ? x : 0.0f)", cuGrad: "y <= 0.0f ? 0.0f : g",
	},
	OpGELU: { // x·Φ(x), in float32 polynomials on the CPU (internal/kernels)
		name: "GELU",
		fwd:  func(x float32, p UnaryParams) float32 { return kernels.GELU32(x) },
		grad: func(g, x, y float32, p UnaryParams) float32 {
			cdf, pdf := kernels.NormCDFPDF(x)
			return g * (cdf + x*pdf)
		},
		ref: func(x float32) float32 {
			v := float64(x)
			return float32(0.5 * v * (1 + math.Erf(v/math.Sqrt2)))
		},
		refGrad: func(g, x float32) float32 {
			v := float64(x)
			cdf := 0.5 * (1 + math.Erf(v/math.Sqrt2))
			pdf := math.Exp(-0.5*v*v) / math.Sqrt(2*math.Pi)
			return float32(float64(g) * (cdf + v*pdf))
		},
		vec: kernels.GELUVec, vecGrad: kernels.GELUGradVec,
		cu: "(float)(0.5 * v * (1.0 + erf(v / WICK_SQRT2)))",
		cuGrad: `double cdf = 0.5 * (1.0 + erf(v / WICK_SQRT2));
			double pdf = exp(-0.5 * v * v) / sqrt(2.0 * WICK_PI);
			return (float)((double)g * (cdf + v * pdf));`,
	},
	OpGELUTanh: { // x·σ(2u), u = √(2/π)·(x + 0.044715·x³), in float32 on the CPU
		name: "GELUTanh",
		fwd:  func(x float32, p UnaryParams) float32 { return kernels.GELUTanh32(x) },
		grad: func(g, x, y float32, p UnaryParams) float32 { return kernels.GELUTanhGrad32(g, x) },
		ref: func(x float32) float32 {
			v := float64(x)
			return float32(0.5 * v * (1 + math.Tanh(sqrt2overPi*(v+0.044715*v*v*v))))
		},
		refGrad: func(g, x float32) float32 {
			v := float64(x)
			inner := sqrt2overPi * (v + 0.044715*v*v*v)
			t := math.Tanh(inner)
			dinner := sqrt2overPi * (1 + 3*0.044715*v*v)
			return float32(float64(g) * (0.5*(1+t) + 0.5*v*(1-t*t)*dinner))
		},
		loop: func(d, s []float32, st int, p UnaryParams) {
			for k := range d {
				d[k] = kernels.GELUTanh32(s[k*st])
			}
		},
		cu: "(float)(0.5 * v * (1.0 + tanh(WICK_SQRT2_OVER_PI * (v + 0.044715 * v * v * v))))",
		cuGrad: `double inner = WICK_SQRT2_OVER_PI * (v + 0.044715 * v * v * v);
			double t = tanh(inner);
			double dinner = WICK_SQRT2_OVER_PI * (1.0 + 3.0 * 0.044715 * v * v);
			return (float)((double)g * (0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * dinner));`,
	},
	OpSin: {
		name: "Sin",
		fwd:  func(x float32, p UnaryParams) float32 { return float32(math.Sin(float64(x))) },
		grad: func(g, x, y float32, p UnaryParams) float32 { return g * float32(math.Cos(float64(x))) },
		cu:   "(float)sin(v)", cuGrad: "g * (float)cos(v)",
	},
	OpCos: {
		name: "Cos",
		fwd:  func(x float32, p UnaryParams) float32 { return float32(math.Cos(float64(x))) },
		grad: func(g, x, y float32, p UnaryParams) float32 { return -g * float32(math.Sin(float64(x))) },
		cu:   "(float)cos(v)", cuGrad: "-g * (float)sin(v)",
	},
	OpAddScalar: {
		name: "AddScalar",
		fwd:  func(x float32, p UnaryParams) float32 { return x + p.A },
		grad: func(g, x, y float32, p UnaryParams) float32 { return g },
		loop: func(d, s []float32, st int, p UnaryParams) {
			for k := range d {
				d[k] = s[k*st] + p.A
			}
		},
		cu: "x + a", cuGrad: "g",
	},
	OpMulScalar: {
		name: "MulScalar",
		fwd:  func(x float32, p UnaryParams) float32 { return x * p.A },
		grad: func(g, x, y float32, p UnaryParams) float32 { return g * p.A },
		loop: func(d, s []float32, st int, p UnaryParams) {
			for k := range d {
				d[k] = s[k*st] * p.A
			}
		},
		cu: "x * a", cuGrad: "g * a",
	},
	OpDivScalar: {
		name: "DivScalar",
		fwd:  func(x float32, p UnaryParams) float32 { return x / p.A },
		grad: func(g, x, y float32, p UnaryParams) float32 { return g / p.A },
		cu:   "x / a", cuGrad: "g / a",
	},
	OpRSubScalar: {
		name: "RSubScalar",
		fwd:  func(x float32, p UnaryParams) float32 { return p.A - x },
		grad: func(g, x, y float32, p UnaryParams) float32 { return -g },
		cu:   "a - x", cuGrad: "-g",
	},
	OpPowScalar: { // the derivative is 0 for the exponent 0, also at x = 0
		name: "PowScalar",
		fwd:  func(x float32, p UnaryParams) float32 { return float32(math.Pow(float64(x), float64(p.A))) },
		grad: func(g, x, y float32, p UnaryParams) float32 {
			a := float64(p.A)
			if a == 0 {
				return 0
			}
			return float32(float64(g) * a * math.Pow(float64(x), a-1))
		},
		cu: "(float)pow(v, (double)a)",
		cuGrad: `if (a == 0.0f) return 0.0f;
			return (float)((double)g * (double)a * pow(v, (double)a - 1.0));`,
	},
	OpClamp: { // NaN stays NaN; the gradient passes where a ≤ x ≤ b
		name: "Clamp",
		fwd: func(x float32, p UnaryParams) float32 {
			if x != x {
				return x
			}
			return min(max(x, p.A), p.B)
		},
		grad: func(g, x, y float32, p UnaryParams) float32 {
			if x >= p.A && x <= p.B {
				return g
			}
			return 0
		},
		cu: "x != x ? x : fminf(fmaxf(x, a), b)", cuGrad: "(x >= a && x <= b) ? g : 0.0f",
	},
	OpSign: {
		name: "Sign",
		fwd: func(x float32, p UnaryParams) float32 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		},
		grad: func(g, x, y float32, p UnaryParams) float32 { return 0 },
		cu:   "x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f)", cuGrad: "0.0f",
	},
	OpSquare: {
		name: "Square",
		fwd:  func(x float32, p UnaryParams) float32 { return x * x },
		grad: func(g, x, y float32, p UnaryParams) float32 { return 2 * x * g },
		loop: func(d, s []float32, st int, p UnaryParams) {
			for k := range d {
				v := s[k*st]
				d[k] = v * v
			}
		},
		cu: "x * x", cuGrad: "2.0f * x * g",
	},
}

// strided writes op(s[k·st]) into d[k] for every k of d.
func (u *unaryDef) strided(d, s []float32, st int, p UnaryParams) {
	if u.loop != nil {
		u.loop(d, s, st, p)
		return
	}
	for k := range d {
		d[k] = u.fwd(s[k*st], p)
	}
}

// dense writes op(s[k]) into d[k] for every k of d: the op's vector
// kernels (AVX-512 over whole blocks of 16, AVX2 over blocks of 8) where
// it has them and the processor runs them, then Go.
func (u *unaryDef) dense(d, s []float32, p UnaryParams) {
	s = s[:len(d)]
	if u.vec != nil {
		n := u.vec(d, s)
		d, s = d[n:], s[n:]
	}
	u.strided(d, s, 1, p)
}

// denseGrad writes g[k]·op′(x[k]) (y[k] = op(x[k])) into d[k] for every k
// of d, with the op's AVX-512 and AVX2 kernels where it has them, as dense
// does.
func (u *unaryDef) denseGrad(d, g, x, y []float32, p UnaryParams) {
	g, x = g[:len(d)], x[:len(d)]
	if u.vecGrad != nil {
		n := u.vecGrad(d, g, x)
		d, g, x, y = d[n:], g[n:], x[n:], y[n:]
	}
	y = y[:len(d)]
	for k := range d {
		d[k] = u.grad(g[k], x[k], y[k], p)
	}
}
