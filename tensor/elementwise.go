package tensor

import "github.com/wickml/wick/autograd"

// unary applies a primitive elementwise op and records its derivative.
func (t *Tensor) unary(op UnaryOp, p UnaryParams) *Tensor {
	mustFloating(op.String(), t)
	if dt := t.DType(); is16(dt) && op != OpPowScalar {
		// the scalars of a 16-bit op are of its dtype, as PyTorch
		// converts a Python scalar to the tensor's dtype (x / 0.3 in
		// bfloat16 divides by 0.30078125); an exponent stays as it is
		h := halfOf(dt)
		p.A, p.B = h.to(h.from(p.A)), h.to(h.from(p.B))
	}
	out := emptyOut(op.String(), t.backend, t.DType(), t.layout.Shape)
	t.backend.Unary(op, p, out.storage, t.storage, t.layout)
	if !autograd.Enabled() || !t.requiresGrad {
		return out
	}
	ts, be := t.sink(), t.backend
	var x, y *Tensor // saved only where the derivative reads them
	if !linearUnary(op) {
		x, y = t.Detach(), out.Detach()
	}
	record(op.String(), out, []*Tensor{t}, func(g *Tensor) {
		g = g.dense()
		xs, ys := g.storage, g.storage // unread by the linear ops
		if x != nil {
			xs, ys = x.dense().storage, y.storage
		}
		dx := emptyOut(op.String(), be, ts.dt, ts.shape)
		be.UnaryGrad(op, p, dx.storage, g.storage, xs, ys, g.Numel())
		ts.accumulate(dx)
	})
	return out
}

// linearUnary reports whether op's derivative reads neither x nor y (g,
// −g, g·A, g/A): its backward keeps neither alive.
func linearUnary(op UnaryOp) bool {
	switch op {
	case OpNeg, OpAddScalar, OpMulScalar, OpDivScalar, OpRSubScalar:
		return true
	}
	return false
}

// Neg returns −t.
func (t *Tensor) Neg() *Tensor { return t.unary(OpNeg, UnaryParams{}) }

// Exp returns eᵗ elementwise.
func (t *Tensor) Exp() *Tensor { return t.unary(OpExp, UnaryParams{}) }

// Log returns the natural logarithm elementwise.
func (t *Tensor) Log() *Tensor { return t.unary(OpLog, UnaryParams{}) }

// Sqrt returns the square root elementwise.
func (t *Tensor) Sqrt() *Tensor { return t.unary(OpSqrt, UnaryParams{}) }

// Rsqrt returns 1/√t elementwise.
func (t *Tensor) Rsqrt() *Tensor { return t.unary(OpRsqrt, UnaryParams{}) }

// Abs returns |t| elementwise (its derivative at 0 is 0, as in PyTorch).
func (t *Tensor) Abs() *Tensor { return t.unary(OpAbs, UnaryParams{}) }

// Sign returns −1, 0 or 1 elementwise.
func (t *Tensor) Sign() *Tensor { return t.unary(OpSign, UnaryParams{}) }

// Square returns t² elementwise.
func (t *Tensor) Square() *Tensor { return t.unary(OpSquare, UnaryParams{}) }

// Tanh returns the hyperbolic tangent elementwise.
func (t *Tensor) Tanh() *Tensor { return t.unary(OpTanh, UnaryParams{}) }

// Sigmoid returns 1/(1+e⁻ᵗ) elementwise.
func (t *Tensor) Sigmoid() *Tensor { return t.unary(OpSigmoid, UnaryParams{}) }

// ReLU returns max(t, 0) elementwise.
func (t *Tensor) ReLU() *Tensor { return t.unary(OpReLU, UnaryParams{}) }

// GELU returns the exact Gaussian error linear unit x·Φ(x), PyTorch's
// default (approximate='none').
func (t *Tensor) GELU() *Tensor { return t.unary(OpGELU, UnaryParams{}) }

// GELUTanh returns GELU's tanh approximation (PyTorch's approximate='tanh').
func (t *Tensor) GELUTanh() *Tensor { return t.unary(OpGELUTanh, UnaryParams{}) }

// Sin returns the sine elementwise.
func (t *Tensor) Sin() *Tensor { return t.unary(OpSin, UnaryParams{}) }

// Cos returns the cosine elementwise.
func (t *Tensor) Cos() *Tensor { return t.unary(OpCos, UnaryParams{}) }

// AddScalar returns t + s.
func (t *Tensor) AddScalar(s float32) *Tensor { return t.unary(OpAddScalar, UnaryParams{A: s}) }

// SubScalar returns t − s.
func (t *Tensor) SubScalar(s float32) *Tensor { return t.unary(OpAddScalar, UnaryParams{A: -s}) }

// RSubScalar returns s − t.
func (t *Tensor) RSubScalar(s float32) *Tensor { return t.unary(OpRSubScalar, UnaryParams{A: s}) }

// MulScalar returns t · s.
func (t *Tensor) MulScalar(s float32) *Tensor { return t.unary(OpMulScalar, UnaryParams{A: s}) }

// DivScalar returns t / s.
func (t *Tensor) DivScalar(s float32) *Tensor { return t.unary(OpDivScalar, UnaryParams{A: s}) }

// PowScalar returns tˢ elementwise.
func (t *Tensor) PowScalar(s float32) *Tensor { return t.unary(OpPowScalar, UnaryParams{A: s}) }

// Clamp limits every element to [lo, hi]; the gradient passes where
// lo ≤ t ≤ hi.
func (t *Tensor) Clamp(lo, hi float32) *Tensor {
	if lo > hi {
		panicf("Clamp", "min %v is greater than max %v", lo, hi)
	}
	return t.unary(OpClamp, UnaryParams{A: lo, B: hi})
}

// broadcastPair returns the output shape of a binary op and the two
// layouts broadcast to it, or panics naming op.
func broadcastPair(op string, a, b *Tensor) ([]int, Layout, Layout) {
	shape, ok := BroadcastShapes(a.layout.Shape, b.layout.Shape)
	if !ok {
		panicf(op, "shapes %v and %v cannot be broadcast together", a.layout.Shape, b.layout.Shape)
	}
	al, _ := a.layout.broadcastTo(shape)
	bl, _ := b.layout.broadcastTo(shape)
	return shape, al, bl
}

// binary applies a primitive elementwise op of two tensors with
// broadcasting. grads returns the gradients of a and b given out's gradient
// g (either may be nil when not needed).
func binary(op BinaryOp, a, b *Tensor, grads func(g *Tensor) (*Tensor, *Tensor)) *Tensor {
	name := op.String()
	sameDevice(name, a, b)
	if a.DType() != b.DType() || (!a.DType().IsFloatingPoint() && !(a.DType() == Int64 && op.IsComparison())) {
		panicf(name, "expected two float32 tensors (or two bfloat16, float16 tensors; or two int64 tensors for a comparison), got %s%v and %s%v", a.DType(), a.layout.Shape, b.DType(), b.layout.Shape)
	}
	shape, al, bl := broadcastPair(name, a, b)
	dt := a.DType()
	if op.IsComparison() {
		dt = Float32
	}
	out := emptyOut(name, a.backend, dt, shape)
	a.backend.Binary(op, out.storage, a.storage, al, b.storage, bl)
	if grads != nil {
		as, bs := a.sink(), b.sink()
		record(name, out, []*Tensor{a, b}, func(g *Tensor) {
			ga, gb := grads(g)
			as.accumulate(ga)
			bs.accumulate(gb)
		})
	}
	return out
}

// Add returns a + b with broadcasting.
func (t *Tensor) Add(o *Tensor) *Tensor {
	return binary(OpAdd, t, o, func(g *Tensor) (*Tensor, *Tensor) { return g, g })
}

// Sub returns a − b with broadcasting.
func (t *Tensor) Sub(o *Tensor) *Tensor {
	return binary(OpSub, t, o, func(g *Tensor) (*Tensor, *Tensor) {
		if !o.requiresGrad {
			return g, nil
		}
		return g, g.Neg()
	})
}

// Mul returns a · b elementwise with broadcasting.
func (t *Tensor) Mul(o *Tensor) *Tensor {
	return binary(OpMul, t, o, func(g *Tensor) (ga, gb *Tensor) {
		if t.requiresGrad {
			ga = g.Mul(o)
		}
		if o.requiresGrad {
			gb = g.Mul(t)
		}
		return
	})
}

// Div returns a / b elementwise with broadcasting.
func (t *Tensor) Div(o *Tensor) *Tensor {
	return binary(OpDiv, t, o, func(g *Tensor) (ga, gb *Tensor) {
		if t.requiresGrad {
			ga = g.Div(o)
		}
		if o.requiresGrad {
			gb = g.Neg().Mul(t).Div(o.Mul(o))
		}
		return
	})
}

// Pow returns aᵇ elementwise with broadcasting.
func (t *Tensor) Pow(o *Tensor) *Tensor {
	var out *Tensor
	out = binary(OpPow, t, o, func(g *Tensor) (ga, gb *Tensor) {
		if t.requiresGrad {
			// b·a^(b−1), zero where b == 0 (also at a == 0, where
			// a^(b−1) is infinite: PyTorch's rule)
			ga = Where(o.Ne(ZerosLike(o)), g.Mul(o).Mul(t.Pow(o.SubScalar(1))), scalarLike(g, 0))
		}
		if o.requiresGrad {
			// aᵇ·log a, zero where a == 0 and b ≥ 0
			mask := t.Eq(ZerosLike(t)).Mul(o.Ge(ZerosLike(o)))
			gb = Where(mask, ZerosLike(g), g.Mul(out.Detach()).Mul(t.Log()))
		}
		return
	})
	return out
}

// minMaxGrads splits g between a and b for Maximum/Minimum with PyTorch's
// rule: ties share it equally, and each side gets all of it except where it
// loses (so where either is NaN, both get it). aLoses and bLoses are 0/1.
func minMaxGrads(a, b, g *Tensor, aLoses, bLoses *Tensor) (*Tensor, *Tensor) {
	tie := a.Eq(b)
	half := g.MulScalar(0.5)
	zero := scalarLike(g, 0)
	ga := Where(tie, half, Where(aLoses, zero, g))
	gb := Where(tie, half, Where(bLoses, zero, g))
	return ga, gb
}

// Maximum returns the elementwise maximum with broadcasting (NaN
// propagates).
func (t *Tensor) Maximum(o *Tensor) *Tensor {
	return binary(OpMaximum, t, o, func(g *Tensor) (*Tensor, *Tensor) { return minMaxGrads(t, o, g, t.Lt(o), t.Gt(o)) })
}

// Minimum returns the elementwise minimum with broadcasting (NaN
// propagates).
func (t *Tensor) Minimum(o *Tensor) *Tensor {
	return binary(OpMinimum, t, o, func(g *Tensor) (*Tensor, *Tensor) { return minMaxGrads(t, o, g, t.Gt(o), t.Lt(o)) })
}

// Eq returns 1 where a == b and 0 elsewhere (Float32, not differentiable).
func (t *Tensor) Eq(o *Tensor) *Tensor { return binary(OpEq, t, o, nil) }

// Ne returns 1 where a != b.
func (t *Tensor) Ne(o *Tensor) *Tensor { return binary(OpNe, t, o, nil) }

// Lt returns 1 where a < b.
func (t *Tensor) Lt(o *Tensor) *Tensor { return binary(OpLt, t, o, nil) }

// Le returns 1 where a <= b.
func (t *Tensor) Le(o *Tensor) *Tensor { return binary(OpLe, t, o, nil) }

// Gt returns 1 where a > b.
func (t *Tensor) Gt(o *Tensor) *Tensor { return binary(OpGt, t, o, nil) }

// Ge returns 1 where a >= b.
func (t *Tensor) Ge(o *Tensor) *Tensor { return binary(OpGe, t, o, nil) }

// scalarLike returns a 0-d tensor holding v with t's dtype and device.
func scalarLike(t *Tensor, v float32) *Tensor {
	out := empty("scalarLike", t.backend, t.DType(), []int{})
	out.backend.Fill(out.storage, out.layout, float64(v))
	return out
}

// EqScalar returns 1 where t == v.
func (t *Tensor) EqScalar(v float32) *Tensor { return t.Eq(scalarLike(t, v)) }

// GtScalar returns 1 where t > v.
func (t *Tensor) GtScalar(v float32) *Tensor { return t.Gt(scalarLike(t, v)) }

// LtScalar returns 1 where t < v.
func (t *Tensor) LtScalar(v float32) *Tensor { return t.Lt(scalarLike(t, v)) }

// Where returns a where cond is nonzero and b elsewhere, broadcasting all
// three. Gradients flow to a and b through the selected positions.
func Where(cond, a, b *Tensor) *Tensor {
	sameDevice("Where", cond, a, b)
	mustFloating("Where", a, b)
	if a.DType() != b.DType() {
		panicf("Where", "expected a and b of one dtype, got %s%v and %s%v", a.DType(), a.layout.Shape, b.DType(), b.layout.Shape)
	}
	c := cond.Float()
	s1, ok1 := BroadcastShapes(c.layout.Shape, a.layout.Shape)
	shape, ok2 := BroadcastShapes(s1, b.layout.Shape)
	if !ok1 || !ok2 {
		panicf("Where", "shapes %v (condition), %v and %v cannot be broadcast together", cond.layout.Shape, a.layout.Shape, b.layout.Shape)
	}
	cl, _ := c.layout.broadcastTo(shape)
	al, _ := a.layout.broadcastTo(shape)
	bl, _ := b.layout.broadcastTo(shape)
	out := emptyOut("Where", a.backend, a.DType(), shape)
	a.backend.Where(out.storage, c.storage, cl, a.storage, al, b.storage, bl)
	record("Where", out, []*Tensor{a, b}, func(g *Tensor) {
		zero := scalarLike(g, 0)
		if a.requiresGrad {
			a.accumulate(Where(c, g, zero))
		}
		if b.requiresGrad {
			b.accumulate(Where(c, zero, g))
		}
	})
	return out
}

// MaskedFill returns t with value wherever mask is nonzero (mask broadcasts
// to t's shape). The gradient flows to t where mask is zero.
func (t *Tensor) MaskedFill(mask *Tensor, value float32) *Tensor {
	if _, ok := mask.layout.broadcastTo(t.layout.Shape); !ok {
		panicf("MaskedFill", "mask of shape %v cannot be broadcast to tensor shape %v", mask.layout.Shape, t.layout.Shape)
	}
	return Where(mask, scalarLike(t, value), t)
}
