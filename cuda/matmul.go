//go:build cuda

package cuda

import (
	"fmt"
	"math"

	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

// MatMul writes x @ y into the contiguous dst with one strided-batched
// cuBLAS call (planMatMul), after copying to dense memory the operands
// the plan asks for.
func (b *backend) MatMul(dst, x tensor.Storage, xl tensor.Layout, y tensor.Storage, yl tensor.Layout) {
	const op = "MatMul"
	defer b.d.enter()()
	nd := len(xl.Shape)
	m, k, n := xl.Shape[nd-2], xl.Shape[nd-1], yl.Shape[nd-1]
	batch := xl.Shape[:nd-2]
	total := numel(batch) * m * n
	d, xs, ys := b.rows(op, dst, total), b.view(op, x, xl), b.view(op, y, yl)
	defer keepAlive(d, xs, ys)
	if total == 0 {
		return
	}
	if k == 0 {
		b.Fill(dst, contiguous(append(append([]int{}, batch...), m, n)), 0)
		return
	}
	denseX, denseY, call := planMatMul(xl, yl)
	var temps []*storage
	defer func() {
		for _, t := range temps {
			t.Release()
		}
	}()
	base := func(s *storage, l tensor.Layout, dense bool) cu.DevicePtr {
		if !dense {
			return s.ptr(op, 0)
		}
		t := b.d.newStorage(op, tensor.Float32, numel(l.Shape))
		temps = append(temps, t)
		b.copy(op, t, contiguous(l.Shape), s, l)
		return t.ptr(op, 0)
	}
	xp, yp := base(xs, xl, denseX), base(ys, yl, denseY)
	for _, v := range []int{call.m, call.n, call.k, call.lda, call.ldb, call.batch} {
		if v > math.MaxInt32 {
			panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("dims too large for cuBLAS: m=%d n=%d k=%d batch=%d", m, n, k, call.batch)})
		}
	}
	b.sgemm(op, call, yp, xp, d.ptr(op, 0))
	b.d.syncIfDebugging(op)
}

// sgemm runs one planned cuBLAS call on operands at the given base
// addresses (the call's offsets are in elements from them).
func (b *backend) sgemm(op string, c gemmCall, A, B, C cu.DevicePtr) {
	if tf := AllowTF32(); tf != b.d.blas.tf32 {
		if err := b.d.blas.setTF32(tf); err != nil {
			b.d.fail(op, "setting the math mode", err)
		}
	}
	at := func(p cu.DevicePtr, off int) cu.DevicePtr { return p + cu.DevicePtr(4*off) }
	err := b.d.blas.sgemm(c.transA, c.transB, c.m, c.n, c.k,
		at(A, c.a), c.lda, c.strideA, at(B, c.b), c.ldb, c.strideB, at(C, c.c), c.ldc, c.strideC, c.batch)
	if err != nil {
		b.d.fail(op, "cuBLAS", err)
	}
}
