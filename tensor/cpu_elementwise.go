package tensor

// Unary runs the op's row of the unary table (unary_ops.go): its dense
// fast path over runs of stride 1, its strided loop otherwise.
func (cpuBackend) Unary(op UnaryOp, p UnaryParams, dst, src Storage, sl Layout) {
	d, s := fs(dst), fs(src)
	u := &unaryOps[op]
	pl := newPlan(sl.Shape, []int{0, sl.Offset}, ContiguousStrides(sl.Shape), sl.Strides)
	pl.run(func(o []int, n int) {
		dd, ss, st := d[o[0]:o[0]+n], s[o[1]:], pl.inner[1]
		if st == 1 {
			u.dense(dd, ss, p)
			return
		}
		u.strided(dd, ss, st, p)
	})
}

// UnaryGrad runs the derivative of the op's row of the unary table.
func (cpuBackend) UnaryGrad(op UnaryOp, p UnaryParams, dst, g, x, y Storage, n int) {
	d, gs, xs, ys := fs(dst), fs(g), fs(x), fs(y)
	u := &unaryOps[op]
	parallelFor(n, grain, func(lo, hi int) { u.denseGrad(d[lo:hi], gs[lo:hi], xs[lo:hi], ys[lo:hi], p) })
}

func (cpuBackend) Binary(op BinaryOp, dst, a Storage, al Layout, b Storage, bl Layout) {
	d := fs(dst)
	pl := newPlan(al.Shape, []int{0, al.Offset, bl.Offset}, ContiguousStrides(al.Shape), al.Strides, bl.Strides)
	def := &binaryOps[op]
	if a.DType() == Int64 {
		ai, bi := is(a), is(b)
		pl.run(func(o []int, n int) {
			sa, sb := pl.inner[1], pl.inner[2]
			for k := range n {
				d[o[0]+k] = b2f(def.cmp(compare3(ai[o[1]+k*sa], bi[o[2]+k*sb])))
			}
		})
		return
	}
	af, bf := fs(a), fs(b)
	switch op {
	case OpAdd, OpSub, OpMul, OpDiv:
		stream := len(d) >= streamMinElems
		pl.run(func(o []int, n int) {
			binaryArith(op, d[o[0]:o[0]+n], af[o[1]:], pl.inner[1], bf[o[2]:], pl.inner[2], stream)
		})
		return
	}
	f := def.fwd
	if def.compare {
		f = func(a, b float32) float32 { return b2f(def.cmp(compare3(a, b))) }
	}
	pl.run(func(o []int, n int) {
		dd, as, bs, sa, sb := d[o[0]:o[0]+n], af[o[1]:], bf[o[2]:], pl.inner[1], pl.inner[2]
		for k := range dd {
			dd[k] = f(as[k*sa], bs[k*sb])
		}
	})
}

// arithGo writes d[i] = a[i] op b[i] for the four arithmetic ops.
func arithGo(op BinaryOp, d, a, b []float32) {
	a, b = a[:len(d)], b[:len(d)]
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
}

// binaryArith is the inner loop of the four arithmetic ops, specialised for
// the common stride patterns. stream asks for non-temporal stores where
// the assembly has them (arithF32).
func binaryArith(op BinaryOp, d, a []float32, sa int, b []float32, sb int, stream bool) {
	n := len(d)
	if sa == 1 && sb == 1 {
		a, b = a[:n], b[:n]
		if arithFast && arithF32(op, d, a, b, stream) { // cpu_fast.go
			return
		}
		arithGo(op, d, a, b)
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
