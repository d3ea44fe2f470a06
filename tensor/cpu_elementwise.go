package tensor

import "math"

const sqrt2overPi = 0.7978845608028654

// unaryFunc returns the scalar function of op, computed in float64 and
// rounded once, so results are within half an ulp of the exact value.
func unaryFunc(op UnaryOp, p UnaryParams) func(float32) float32 {
	a, b := p.A, p.B
	switch op {
	case OpNeg:
		return func(x float32) float32 { return -x }
	case OpExp:
		return func(x float32) float32 { return float32(math.Exp(float64(x))) }
	case OpLog:
		return func(x float32) float32 { return float32(math.Log(float64(x))) }
	case OpSqrt:
		return func(x float32) float32 { return float32(math.Sqrt(float64(x))) }
	case OpRsqrt:
		return func(x float32) float32 { return float32(1 / math.Sqrt(float64(x))) }
	case OpAbs:
		return func(x float32) float32 { return float32(math.Abs(float64(x))) }
	case OpTanh:
		return func(x float32) float32 { return float32(math.Tanh(float64(x))) }
	case OpSigmoid:
		return func(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }
	case OpReLU:
		return func(x float32) float32 {
			if x > 0 {
				return x
			}
			return 0
		}
	case OpGELU:
		return func(x float32) float32 {
			v := float64(x)
			return float32(0.5 * v * (1 + math.Erf(v/math.Sqrt2)))
		}
	case OpGELUTanh:
		return func(x float32) float32 {
			v := float64(x)
			return float32(0.5 * v * (1 + math.Tanh(sqrt2overPi*(v+0.044715*v*v*v))))
		}
	case OpSin:
		return func(x float32) float32 { return float32(math.Sin(float64(x))) }
	case OpCos:
		return func(x float32) float32 { return float32(math.Cos(float64(x))) }
	case OpAddScalar:
		return func(x float32) float32 { return x + a }
	case OpMulScalar:
		return func(x float32) float32 { return x * a }
	case OpDivScalar:
		return func(x float32) float32 { return x / a }
	case OpRSubScalar:
		return func(x float32) float32 { return a - x }
	case OpPowScalar:
		return func(x float32) float32 { return float32(math.Pow(float64(x), float64(a))) }
	case OpClamp:
		return func(x float32) float32 {
			if x != x {
				return x
			}
			return min(max(x, a), b)
		}
	case OpSign:
		return func(x float32) float32 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		}
	case OpSquare:
		return func(x float32) float32 { return x * x }
	}
	panic("tensor: unknown unary op")
}

// unaryGradFunc returns g·f'(x) given x and y = f(x).
func unaryGradFunc(op UnaryOp, p UnaryParams) func(g, x, y float32) float32 {
	switch op {
	case OpNeg:
		return func(g, x, y float32) float32 { return -g }
	case OpExp:
		return func(g, x, y float32) float32 { return g * y }
	case OpLog:
		return func(g, x, y float32) float32 { return g / x }
	case OpSqrt:
		return func(g, x, y float32) float32 { return g / (2 * y) }
	case OpRsqrt:
		return func(g, x, y float32) float32 { return -0.5 * g * y * y * y }
	case OpAbs:
		return func(g, x, y float32) float32 {
			switch {
			case x > 0:
				return g
			case x < 0:
				return -g
			}
			return 0
		}
	case OpTanh:
		return func(g, x, y float32) float32 { return g * (1 - y*y) }
	case OpSigmoid:
		return func(g, x, y float32) float32 { return g * (1 - y) * y }
	case OpReLU:
		// PyTorch's threshold_backward: zero where y <= 0 (so a NaN input
		// passes the gradient through)
		return func(g, x, y float32) float32 {
			if y <= 0 {
				return 0
			}
			return g
		}
	case OpGELU:
		return func(g, x, y float32) float32 {
			v := float64(x)
			cdf := 0.5 * (1 + math.Erf(v/math.Sqrt2))
			pdf := math.Exp(-0.5*v*v) / math.Sqrt(2*math.Pi)
			return float32(float64(g) * (cdf + v*pdf))
		}
	case OpGELUTanh:
		return func(g, x, y float32) float32 {
			v := float64(x)
			inner := sqrt2overPi * (v + 0.044715*v*v*v)
			t := math.Tanh(inner)
			dinner := sqrt2overPi * (1 + 3*0.044715*v*v)
			return float32(float64(g) * (0.5*(1+t) + 0.5*v*(1-t*t)*dinner))
		}
	case OpSin:
		return func(g, x, y float32) float32 { return g * float32(math.Cos(float64(x))) }
	case OpCos:
		return func(g, x, y float32) float32 { return -g * float32(math.Sin(float64(x))) }
	case OpAddScalar:
		return func(g, x, y float32) float32 { return g }
	case OpMulScalar:
		a := p.A
		return func(g, x, y float32) float32 { return g * a }
	case OpDivScalar:
		a := p.A
		return func(g, x, y float32) float32 { return g / a }
	case OpRSubScalar:
		return func(g, x, y float32) float32 { return -g }
	case OpPowScalar:
		a := float64(p.A)
		return func(g, x, y float32) float32 {
			if a == 0 {
				return 0
			}
			return float32(float64(g) * a * math.Pow(float64(x), a-1))
		}
	case OpClamp:
		lo, hi := p.A, p.B
		return func(g, x, y float32) float32 {
			if x >= lo && x <= hi {
				return g
			}
			return 0
		}
	case OpSign:
		return func(g, x, y float32) float32 { return 0 }
	case OpSquare:
		return func(g, x, y float32) float32 { return 2 * x * g }
	}
	panic("tensor: unknown unary op")
}

func (cpuBackend) Unary(op UnaryOp, p UnaryParams, dst, src Storage, sl Layout) {
	d, s := fs(dst), fs(src)
	pl := newPlan(sl.Shape, []int{0, sl.Offset}, ContiguousStrides(sl.Shape), sl.Strides)
	switch op {
	case OpAddScalar, OpMulScalar, OpReLU, OpGELU, OpGELUTanh, OpSquare:
		pl.run(func(o []int, n int) {
			dd, ss, st := d[o[0]:o[0]+n], s[o[1]:], pl.inner[1]
			if op == OpGELU && st == 1 { // fast float32 path, cpu_fast.go
				geluF32(dd, ss)
				return
			}
			if op == OpGELUTanh && st == 1 {
				geluTanhF32(dd, ss)
				return
			}
			switch op {
			case OpAddScalar:
				for k := range dd {
					dd[k] = ss[k*st] + p.A
				}
			case OpMulScalar:
				for k := range dd {
					dd[k] = ss[k*st] * p.A
				}
			case OpReLU:
				for k := range dd {
					dd[k] = max(ss[k*st], 0)
				}
			case OpGELU:
				for k := range dd {
					dd[k] = f32GELU(ss[k*st])
				}
			case OpGELUTanh:
				for k := range dd {
					dd[k] = f32GELUTanh(ss[k*st])
				}
			case OpSquare:
				for k := range dd {
					v := ss[k*st]
					dd[k] = v * v
				}
			}
		})
		return
	}
	f := unaryFunc(op, p)
	pl.run(func(o []int, n int) {
		dd, ss, st := d[o[0]:o[0]+n], s[o[1]:], pl.inner[1]
		for k := range dd {
			dd[k] = f(ss[k*st])
		}
	})
}

func (cpuBackend) UnaryGrad(op UnaryOp, p UnaryParams, dst, g, x, y Storage, n int) {
	d, gs, xs, ys := fs(dst), fs(g), fs(x), fs(y)
	if op == OpGELU { // fast float32 path, cpu_fast.go
		parallelFor(n, grain, func(lo, hi int) { geluGradF32(d[lo:hi], gs[lo:hi], xs[lo:hi]) })
		return
	}
	if op == OpGELUTanh {
		parallelFor(n, grain, func(lo, hi int) { geluTanhGradF32(d[lo:hi], gs[lo:hi], xs[lo:hi]) })
		return
	}
	f := unaryGradFunc(op, p)
	parallelFor(n, grain, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			d[k] = f(gs[k], xs[k], ys[k])
		}
	})
}

func binaryFunc(op BinaryOp) func(a, b float32) float32 {
	b2f := func(c bool) float32 {
		if c {
			return 1
		}
		return 0
	}
	switch op {
	case OpAdd:
		return func(a, b float32) float32 { return a + b }
	case OpSub:
		return func(a, b float32) float32 { return a - b }
	case OpMul:
		return func(a, b float32) float32 { return a * b }
	case OpDiv:
		return func(a, b float32) float32 { return a / b }
	case OpPow:
		return func(a, b float32) float32 { return float32(math.Pow(float64(a), float64(b))) }
	case OpMaximum:
		return func(a, b float32) float32 {
			if a != a || b != b {
				return float32(math.NaN())
			}
			return max(a, b)
		}
	case OpMinimum:
		return func(a, b float32) float32 {
			if a != a || b != b {
				return float32(math.NaN())
			}
			return min(a, b)
		}
	case OpEq:
		return func(a, b float32) float32 { return b2f(a == b) }
	case OpNe:
		return func(a, b float32) float32 { return b2f(a != b) }
	case OpLt:
		return func(a, b float32) float32 { return b2f(a < b) }
	case OpLe:
		return func(a, b float32) float32 { return b2f(a <= b) }
	case OpGt:
		return func(a, b float32) float32 { return b2f(a > b) }
	case OpGe:
		return func(a, b float32) float32 { return b2f(a >= b) }
	}
	panic("tensor: unknown binary op")
}

func intCompare(op BinaryOp) func(a, b int64) float32 {
	b2f := func(c bool) float32 {
		if c {
			return 1
		}
		return 0
	}
	switch op {
	case OpEq:
		return func(a, b int64) float32 { return b2f(a == b) }
	case OpNe:
		return func(a, b int64) float32 { return b2f(a != b) }
	case OpLt:
		return func(a, b int64) float32 { return b2f(a < b) }
	case OpLe:
		return func(a, b int64) float32 { return b2f(a <= b) }
	case OpGt:
		return func(a, b int64) float32 { return b2f(a > b) }
	case OpGe:
		return func(a, b int64) float32 { return b2f(a >= b) }
	}
	panic("tensor: integer tensors support only comparisons")
}

func (cpuBackend) Binary(op BinaryOp, dst, a Storage, al Layout, b Storage, bl Layout) {
	d := fs(dst)
	pl := newPlan(al.Shape, []int{0, al.Offset, bl.Offset}, ContiguousStrides(al.Shape), al.Strides, bl.Strides)
	if a.DType() == Int64 {
		ai, bi := is(a), is(b)
		f := intCompare(op)
		pl.run(func(o []int, n int) {
			sa, sb := pl.inner[1], pl.inner[2]
			for k := range n {
				d[o[0]+k] = f(ai[o[1]+k*sa], bi[o[2]+k*sb])
			}
		})
		return
	}
	af, bf := fs(a), fs(b)
	switch op {
	case OpAdd, OpSub, OpMul, OpDiv:
		pl.run(func(o []int, n int) {
			binaryArith(op, d[o[0]:o[0]+n], af[o[1]:], pl.inner[1], bf[o[2]:], pl.inner[2])
		})
		return
	}
	f := binaryFunc(op)
	pl.run(func(o []int, n int) {
		dd, as, bs, sa, sb := d[o[0]:o[0]+n], af[o[1]:], bf[o[2]:], pl.inner[1], pl.inner[2]
		for k := range dd {
			dd[k] = f(as[k*sa], bs[k*sb])
		}
	})
}

// binaryArith is the inner loop of the four arithmetic ops, specialised for
// the common stride patterns.
func binaryArith(op BinaryOp, d, a []float32, sa int, b []float32, sb int) {
	n := len(d)
	if sa == 1 && sb == 1 {
		a, b = a[:n], b[:n]
		if arithFast && arithF32(op, d, a, b) { // cpu_fast.go
			return
		}
		switch op {
		case OpAdd:
			for k := range d {
				d[k] = a[k] + b[k]
			}
		case OpSub:
			for k := range d {
				d[k] = a[k] - b[k]
			}
		case OpMul:
			for k := range d {
				d[k] = a[k] * b[k]
			}
		case OpDiv:
			for k := range d {
				d[k] = a[k] / b[k]
			}
		}
		return
	}
	if sa == 1 && sb == 0 {
		a, bv := a[:n], b[0]
		switch op {
		case OpAdd:
			for k := range d {
				d[k] = a[k] + bv
			}
		case OpSub:
			for k := range d {
				d[k] = a[k] - bv
			}
		case OpMul:
			for k := range d {
				d[k] = a[k] * bv
			}
		case OpDiv:
			for k := range d {
				d[k] = a[k] / bv
			}
		}
		return
	}
	switch op {
	case OpAdd:
		for k := range d {
			d[k] = a[k*sa] + b[k*sb]
		}
	case OpSub:
		for k := range d {
			d[k] = a[k*sa] - b[k*sb]
		}
	case OpMul:
		for k := range d {
			d[k] = a[k*sa] * b[k*sb]
		}
	case OpDiv:
		for k := range d {
			d[k] = a[k*sa] / b[k*sb]
		}
	}
}

func (cpuBackend) Where(dst, cond Storage, cl Layout, a Storage, al Layout, b Storage, bl Layout) {
	d, c, af, bf := fs(dst), fs(cond), fs(a), fs(b)
	pl := newPlan(cl.Shape, []int{0, cl.Offset, al.Offset, bl.Offset}, ContiguousStrides(cl.Shape), cl.Strides, al.Strides, bl.Strides)
	pl.run(func(o []int, n int) {
		sc, sa, sb := pl.inner[1], pl.inner[2], pl.inner[3]
		for k := range n {
			if c[o[1]+k*sc] != 0 {
				d[o[0]+k] = af[o[2]+k*sa]
			} else {
				d[o[0]+k] = bf[o[3]+k*sb]
			}
		}
	})
}
