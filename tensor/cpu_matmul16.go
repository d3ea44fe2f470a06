package tensor

import (
	"sync"

	"github.com/wickml/wick/internal/blas"
	"github.com/wickml/wick/internal/parallel"
)

// scratch16Pool holds the float32 sums of 16-bit products before they are
// rounded into the output (reused: a 256×1536 product's are 1.5 MB).
var scratch16Pool sync.Pool

// scratch16 returns a buffer of n float32s from scratch16Pool.
func scratch16(n int) *[]float32 {
	if p, ok := scratch16Pool.Get().(*[]float32); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float32, n)
	return &s
}

// The CPU backend's products with 16-bit operands or output: bfloat16
// operands go to blas.GemmBF16 as they are stored (the VDPBF16PS kernel
// where AVX512_BF16 runs, the bfloat16 dot products of generation, else
// blocks widened to float32 for the float32 sgemm); float16 ones are
// widened to float32 first (no float16 kernel). Sums are float32; a 16-bit
// output is rounded once from them, as PyTorch's CPU matmul does for
// bfloat16.

// matMul16 is cpuBackend.MatMul where an operand or dst is not Float32.
func (b cpuBackend) matMul16(dst, a Storage, al Layout, bs Storage, bl Layout) {
	b.matMulRound(dst, a, al, false, bs, bl, false)
}

// matMulRound is matMul16 with a Float32 operand rounded to bfloat16 as
// the product reads it where roundA or roundB says so (autocast's
// operands): the product of the rounded values, without their copy.
func (b cpuBackend) matMulRound(dst, a Storage, al Layout, roundA bool, bs Storage, bl Layout, roundB bool) {
	nd := len(al.Shape)
	m, k, n := al.Shape[nd-2], al.Shape[nd-1], bl.Shape[nd-1]
	a, al = b.operand16(a, al)
	bs, bl = b.operand16(bs, bl)
	ta, lda, _ := al.MatrixOperand()
	tb, ldb, _ := bl.MatrixOperand()
	batchShape := al.Shape[:nd-2]
	nb := numel(batchShape)
	aoff := Layout{Shape: batchShape, Strides: al.Strides[:nd-2], Offset: al.Offset}.Offsets()
	boff := Layout{Shape: batchShape, Strides: bl.Strides[:nd-2], Offset: bl.Offset}.Offsets()
	d := dst.(*cpuStorage).live()
	one := func(i, threads int) {
		am := mat16(a, aoff[i], lda, ta, roundA)
		bm := mat16(bs, boff[i], ldb, tb, roundB)
		if d.dt == Float32 {
			blas.GemmBF16(m, n, k, am, bm, d.f[i*m*n:], n, threads)
			return
		}
		buf := scratch16(m * n)
		defer scratch16Pool.Put(buf)
		c := *buf
		blas.GemmBF16(m, n, k, am, bm, c, n, threads)
		out := d.h[i*m*n : (i+1)*m*n]
		if d.dt == BFloat16 {
			for j, v := range c {
				out[j] = BF16FromFloat32(v)
			}
			return
		}
		for j, v := range c {
			out[j] = F16FromFloat32(v)
		}
	}
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

// operand16 returns an operand of a product as blas.GemmBF16 takes it:
// Float32 and BFloat16 storages as they are (copied contiguous, in their
// dtype, where neither of the matrix's strides is 1), Float16 widened to a
// contiguous Float32 copy.
func (b cpuBackend) operand16(s Storage, l Layout) (Storage, Layout) {
	dt := s.DType()
	if _, _, ok := l.MatrixOperand(); ok && dt != Float16 {
		return s, l
	}
	if dt == Float16 {
		dt = Float32
	}
	CheckAlloc("MatMul", dt, l.Numel())
	out := b.AllocUninit(dt, l.Numel()) // Copy writes every element
	cl := contiguousLayout(l.Shape)
	b.Copy(out, cl, s, l)
	return out, cl
}

// mat16 is the matrix of s that starts at off, as a blas.Mat16 (a
// Float32 one rounded to bfloat16 as it is read if round).
func mat16(s Storage, off, ld int, trans, round bool) blas.Mat16 {
	c := s.(*cpuStorage).live()
	if c.dt == BFloat16 {
		return blas.Mat16{H: c.h[off:], LD: ld, Trans: trans}
	}
	return blas.Mat16{F: c.f[off:], LD: ld, Trans: trans, Round: round}
}
