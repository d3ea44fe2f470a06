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
// the plan asks for: cublasSgemmStridedBatched for float32, and
// cublasGemmStridedBatchedEx with float32 compute for two bfloat16 or two
// float16 operands (the product in their dtype, or float32).
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
	var temps []*storage
	defer func() {
		for _, t := range temps {
			t.Release()
		}
	}()
	// copy returns a contiguous copy of the view (s, l) in dtype dt
	copyAs := func(s *storage, l tensor.Layout, dt tensor.DType) *storage {
		t := b.d.newStorage(op, dt, numel(l.Shape))
		temps = append(temps, t)
		b.copy(op, t, contiguous(l.Shape), s, l)
		return t
	}
	// Operands of one 16-bit dtype go to cublasGemmEx as they are, with
	// float32 compute and the output in dst's dtype. Any other mix is
	// multiplied in float32: a 16-bit operand is widened (exactly) first,
	// as the CPU backend widens it, and a 16-bit dst is rounded once from
	// a float32 product.
	ex := xs.dt == ys.dt && is16(xs.dt)
	if !ex {
		if xs.dt != tensor.Float32 {
			xs, xl = copyAs(xs, xl, tensor.Float32), contiguous(xl.Shape)
		}
		if ys.dt != tensor.Float32 {
			ys, yl = copyAs(ys, yl, tensor.Float32), contiguous(yl.Shape)
		}
	}
	out := d
	if !ex && d.dt != tensor.Float32 {
		out = b.d.newStorage(op, tensor.Float32, total)
		temps = append(temps, out)
	}
	denseX, denseY, call := planMatMul(xl, yl)
	base := func(s *storage, l tensor.Layout, dense bool) cu.DevicePtr {
		if !dense {
			return s.ptr(op, 0)
		}
		return copyAs(s, l, s.dt).ptr(op, 0)
	}
	xp, yp := base(xs, xl, denseX), base(ys, yl, denseY)
	for _, v := range []int{call.m, call.n, call.k, call.lda, call.ldb, call.batch} {
		if v > math.MaxInt32 {
			panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("dims too large for cuBLAS: m=%d n=%d k=%d batch=%d", m, n, k, call.batch)})
		}
	}
	if ex {
		b.gemmEx(op, call, xs.dt, yp, xp, d.dt, d.ptr(op, 0))
	} else {
		b.sgemm(op, call, yp, xp, out.ptr(op, 0))
	}
	if out != d {
		b.copy(op, d, contiguous([]int{total}), out, contiguous([]int{total}))
	}
	b.d.syncIfDebugging(op)
}

// gemmEx runs one planned cuBLAS call on 16-bit operands of dtype ab at
// the given base addresses into C of dtype c, with float32 compute.
func (b *backend) gemmEx(op string, call gemmCall, ab tensor.DType, A, B cu.DevicePtr, c tensor.DType, C cu.DevicePtr) {
	at := func(p cu.DevicePtr, off int, dt tensor.DType) cu.DevicePtr {
		return p + cu.DevicePtr(int64(off)*elemSize(dt))
	}
	err := b.d.blas.gemmEx(call.transA, call.transB, call.m, call.n, call.k, ab,
		at(A, call.a, ab), call.lda, call.strideA, at(B, call.b, ab), call.ldb, call.strideB, c, at(C, call.c, c), call.ldc, call.strideC, call.batch)
	if err != nil {
		b.d.fail(op, "cuBLAS", err)
	}
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
