package tensor

import (
	"github.com/wickml/wick/internal/blas"
	"github.com/wickml/wick/internal/parallel"
)

func (b cpuBackend) MatMul(dst, a Storage, al Layout, bs Storage, bl Layout) {
	if dst.DType() != Float32 || a.DType() != Float32 || bs.DType() != Float32 {
		b.matMul16(dst, a, al, bs, bl) // cpu_matmul16.go
		return
	}
	nd := len(al.Shape)
	m, k, n := al.Shape[nd-2], al.Shape[nd-1], bl.Shape[nd-1]
	// operands whose matrices are not unit-stride in either direction are
	// copied to contiguous first
	if _, _, ok := al.MatrixOperand(); !ok {
		a = b.contiguousCopy(a, al)
		al = contiguousLayout(al.Shape)
	}
	if _, _, ok := bl.MatrixOperand(); !ok {
		bs = b.contiguousCopy(bs, bl)
		bl = contiguousLayout(bl.Shape)
	}
	ta, lda, _ := al.MatrixOperand()
	tb, ldb, _ := bl.MatrixOperand()
	af, bf, d := fs(a), fs(bs), fs(dst)
	batchShape := al.Shape[:nd-2]
	nb := numel(batchShape)
	// the storage offset of each matrix of the batch
	aoff := Layout{Shape: batchShape, Strides: al.Strides[:nd-2], Offset: al.Offset}.Offsets()
	boff := Layout{Shape: batchShape, Strides: bl.Strides[:nd-2], Offset: bl.Offset}.Offsets()
	one := func(i, threads int) {
		blas.Sgemm(ta, tb, m, n, k, af[aoff[i]:], lda, bf[boff[i]:], ldb, d[i*m*n:], n, false, threads)
	}
	// small products (attention's per-head ones): one whole product per
	// task on the shared pool; large ones are split inside Sgemm instead
	if nb > 1 && m*n*k < 1<<21 {
		parallel.For(nb, 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				one(i, 1)
			}
		})
		return
	}
	for i := range nb {
		one(i, 0)
	}
}

func (b cpuBackend) contiguousCopy(s Storage, l Layout) Storage {
	CheckAlloc("MatMul", Float32, l.Numel())
	out := b.AllocUninit(Float32, l.Numel()) // Copy writes every element
	b.Copy(out, contiguousLayout(l.Shape), s, l)
	return out
}
