package tensor

import "github.com/wickml/wick/internal/kernels"

// widen returns a contiguous Float32 copy of the view (s, l) and its
// layout: the 16-bit dtypes' elementwise ops compute in float32 and round
// the result once, as PyTorch's CPU kernels for bfloat16 and float16 do.
func (b cpuBackend) widen(s Storage, l Layout) (Storage, Layout) {
	wl := contiguousLayout(l.Shape)
	w := b.AllocUninit(Float32, wl.Numel())
	b.Copy(w, wl, s, l)
	return w, wl
}

// Unary runs the op's row of the unary table (unary_ops.go): its dense
// fast path over runs of stride 1, its strided loop otherwise.
func (b cpuBackend) Unary(op UnaryOp, p UnaryParams, dst, src Storage, sl Layout) {
	if is16(src.DType()) {
		w, wl := b.widen(src, sl)
		tmp := b.AllocUninit(Float32, wl.Numel())
		b.Unary(op, p, tmp, w, wl)
		b.Copy(dst, wl, tmp, wl) // rounded once
		return
	}
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
func (b cpuBackend) UnaryGrad(op UnaryOp, p UnaryParams, dst, g, x, y Storage, n int) {
	if is16(x.DType()) {
		l := contiguousLayout([]int{n})
		gw, _ := b.widen(g, l)
		xw, _ := b.widen(x, l)
		yw, _ := b.widen(y, l)
		tmp := b.AllocUninit(Float32, n)
		b.UnaryGrad(op, p, tmp, gw, xw, yw, n)
		b.Copy(dst, l, tmp, l)
		return
	}
	d, gs, xs, ys := fs(dst), fs(g), fs(x), fs(y)
	u := &unaryOps[op]
	parallelFor(n, grain, func(lo, hi int) { u.denseGrad(d[lo:hi], gs[lo:hi], xs[lo:hi], ys[lo:hi], p) })
}

func (c cpuBackend) Binary(op BinaryOp, dst, a Storage, al Layout, b Storage, bl Layout) {
	if is16(a.DType()) {
		aw, awl := c.widen(a, al)
		bw, bwl := c.widen(b, bl)
		if is16(dst.DType()) {
			tmp := c.AllocUninit(Float32, awl.Numel())
			c.Binary(op, tmp, aw, awl, bw, bwl)
			c.Copy(dst, awl, tmp, awl) // rounded once
			return
		}
		c.Binary(op, dst, aw, awl, bw, bwl) // a comparison: float32 1 or 0
		return
	}
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

// arithFast selects kernels.Arith (the vector kernels where they run) in
// binaryArith; tests switch it off to compare with the Go loops.
var arithFast = true

// streamMinElems is the smallest output that the arithmetic ops write with
// non-temporal stores (kernels.StreamMinElems); tests lower it.
var streamMinElems = kernels.StreamMinElems

// arithKernel maps the four arithmetic ops to kernels.Arith's.
func arithKernel(op BinaryOp) kernels.ArithOp {
	switch op {
	case OpAdd:
		return kernels.Add
	case OpSub:
		return kernels.Sub
	case OpMul:
		return kernels.Mul
	case OpDiv:
		return kernels.Div
	}
	panicf("Binary", "internal: %v is not one of Add, Sub, Mul, Div", op)
	return 0
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
// the assembly has them (kernels.Arith).
func binaryArith(op BinaryOp, d, a []float32, sa int, b []float32, sb int, stream bool) {
	n := len(d)
	if sa == 1 && sb == 1 {
		a, b = a[:n], b[:n]
		if arithFast {
			kernels.Arith(arithKernel(op), d, a, b, stream)
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
	pl := newPlan(cl.Shape, []int{0, cl.Offset, al.Offset, bl.Offset}, ContiguousStrides(cl.Shape), cl.Strides, al.Strides, bl.Strides)
	if is16(a.DType()) {
		// the bit patterns of the selected elements, as they are
		d, c := dst.(*cpuStorage).live().h, fs(cond)
		ah, bh := a.(*cpuStorage).live().h, b.(*cpuStorage).live().h
		pl.run(func(o []int, n int) {
			sc, sa, sb := pl.inner[1], pl.inner[2], pl.inner[3]
			for k := range n {
				if c[o[1]+k*sc] != 0 {
					d[o[0]+k] = ah[o[2]+k*sa]
				} else {
					d[o[0]+k] = bh[o[3]+k*sb]
				}
			}
		})
		return
	}
	d, c, af, bf := fs(dst), fs(cond), fs(a), fs(b)
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
