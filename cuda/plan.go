package cuda

// Host-side planning shared by the kernel launchers: index arithmetic,
// layout merging, launch choices and allocator size classes. It is plain Go
// without the cuda tag, so that its tests run on machines without a GPU.

import "github.com/wickml/wick/tensor"

// maxD is the number of dims a strided kernel takes (WICK_MAXD in
// csrc/common.cuh); views with more dims after merging are split into
// several launches.
const maxD = 6

// packLayout returns the layout parameters of a strided kernel
// (csrc/common.cuh): nd, the shape right-aligned in maxD slots (leading
// slots 1), then for each operand its strides right-aligned in maxD slots
// (leading slots 0). shape has at most maxD dims.
func packLayout(shape []int, strides ...[]int) []int64 {
	out := make([]int64, 0, 1+maxD*(1+len(strides)))
	out = append(out, int64(len(shape)))
	pad := maxD - len(shape)
	for i := range maxD {
		if i < pad {
			out = append(out, 1)
		} else {
			out = append(out, int64(shape[i-pad]))
		}
	}
	for _, st := range strides {
		for i := range maxD {
			if i < pad {
				out = append(out, 0)
			} else {
				out = append(out, int64(st[i-pad]))
			}
		}
	}
	return out
}

// forChunks collapses shape and strides and calls fn once per launch: with
// at most maxD dims, and the element offset of each operand's first element
// in that launch. Views with more than maxD dims after collapsing are
// iterated over their leading dims.
func forChunks(shape []int, strides [][]int, fn func(offs []int, shape []int, strides [][]int)) {
	cs, cst := tensor.Collapse(shape, strides...)
	if len(cs) <= maxD {
		fn(make([]int, len(strides)), cs, cst)
		return
	}
	outer := len(cs) - maxD
	inner := cs[outer:]
	innerSt := make([][]int, len(cst))
	for j := range cst {
		innerSt[j] = cst[j][outer:]
	}
	idx := make([]int, outer)
	offs := make([]int, len(cst))
	for {
		for j := range cst {
			offs[j] = 0
			for d := range outer {
				offs[j] += idx[d] * cst[j][d]
			}
		}
		fn(offs, inner, innerSt)
		d := outer - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < cs[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// useBlockReduce chooses between one block per output (long reduced dims)
// and one thread per output (short ones, or many outputs that sit next to
// each other in memory so that threads read coalesced). It is the plan of
// LogSumExp, which is never split (planReduce).
func useBlockReduce(nout, n, r int) bool {
	if n < 64 {
		return false
	}
	if r != 1 && nout >= 2048 {
		return false
	}
	return true
}

// The kernels a reduction launch can use (planReduce).
const (
	reduceThread = iota // one thread per output: wick_reduce_small_f32
	reduceBlock         // one block per output: wick_reduce_f32
	reduceSplit         // tiles × chunks of blocks, then a final pass: wick_reduce_part_f32
)

// splitBlocks is the number of blocks a split reduction aims for: several
// per SM on the largest GPUs (132 SMs on an H100/H200), so that every SM
// has work and enough reads are in flight to approach memory bandwidth.
const splitBlocks = 1024

// minChunk and minChunkRows are the fewest elements of a reduced dim a
// block of a split reduction takes, with reduced stride 1 and otherwise:
// fewer would make the partials and the final pass cost more than they
// save.
const (
	minChunk     = 2048
	minChunkRows = 64
)

// reducePlan says how one launch's worth of outputs is reduced: the
// kernel, and for a split reduction the outputs per block (tx), the
// elements of the reduced dim per block (chunk) and their number (chunks).
type reducePlan struct {
	kind              int
	tx, chunk, chunks int
}

// planReduce plans a reduction of nout outputs over n elements of stride r
// each (lse: LogSumExp, which keeps the two one-pass kernels). Short
// reduced dims (n < 64) take one thread per output. With stride 1, lines
// are split into chunks when there are too few outputs to give every SM a
// block (a reduction over all elements is one output); otherwise each
// output gets a block. With another stride, the outputs are adjacent in
// memory (a column sum such as a bias gradient): blocks take tiles of up
// to 32 outputs, so that a warp reads 32 adjacent elements at once, and
// the reduced dim is split until there are about splitBlocks blocks.
func planReduce(nout, n, r int, lse bool) reducePlan {
	if n < 64 {
		return reducePlan{kind: reduceThread}
	}
	if lse {
		if useBlockReduce(nout, n, r) {
			return reducePlan{kind: reduceBlock}
		}
		return reducePlan{kind: reduceThread}
	}
	ceil := func(a, b int) int { return (a + b - 1) / b }
	if r == 1 {
		chunks := min(ceil(splitBlocks, nout), ceil(n, minChunk), 65535)
		if chunks <= 1 {
			return reducePlan{kind: reduceBlock}
		}
		chunk := ceil(n, chunks)
		return reducePlan{kind: reduceSplit, tx: 1, chunk: chunk, chunks: ceil(n, chunk)}
	}
	tx := 1
	for tx < 32 && tx < nout {
		tx *= 2
	}
	tiles := ceil(nout, tx)
	chunks := max(1, min(ceil(splitBlocks, tiles), ceil(n, minChunkRows), 65535))
	chunk := ceil(n, chunks)
	return reducePlan{kind: reduceSplit, tx: tx, chunk: chunk, chunks: ceil(n, chunk)}
}

// bucket returns the size class of a request of n bytes: multiples of 512
// bytes up to 1 MiB, then multiples of 2 MiB.
func bucket(n int64) int64 {
	const small, large = 512, 2 << 20
	if n <= 1<<20 {
		return max(small, (n+small-1)/small*small)
	}
	return (n + large - 1) / large * large
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// gemmCall is one cublasSgemmStridedBatched call. cuBLAS is column-major:
// for i < batch, C_i = op(A_i)·op(B_i) with C_i m×n (leading dimension
// ldc), A_i at element a + i·strideA of its operand (op(A_i) m×k, stored
// m×k, or k×m when transA, with leading dimension lda), B_i likewise.
type gemmCall struct {
	transA, transB  bool
	m, n, k         int
	a, lda, strideA int
	b, ldb, strideB int
	c, ldc, strideC int
	batch           int
}

// rowMajor returns the call for row-major products C = op(X)·op(Y) (C m×n
// with leading dimension ldc, op(X) m×k, op(Y) k×n): a row-major matrix is
// its transpose in column-major, so cuBLAS computes Cᵀ = op(Y)ᵀ·op(X)ᵀ,
// with Y as its first operand and X as its second. x, y and c are
// (offset, leading dimension, batch stride).
func rowMajor(tx, ty bool, m, n, k int, x, y, c [3]int, batch int) gemmCall {
	return gemmCall{
		transA: ty, transB: tx, m: n, n: m, k: k,
		a: y[0], lda: y[1], strideA: y[2],
		b: x[0], ldb: x[1], strideB: x[2],
		c: c[0], ldc: c[1], strideC: c[2],
		batch: batch,
	}
}

// planMatMul plans MatMul's one cuBLAS call for x [..., m, k] @ y
// [..., k, n] (the same batch shape, strides 0 on broadcast dims) into a
// contiguous [..., m, n]: the call's first operand is y, its second x.
// An operand whose matrices have no unit stride in either direction, or
// whose batch dims do not merge with the others' into one batch stride, is
// copied to dense (contiguous, offset 0) memory first: denseX, denseY.
func planMatMul(xl, yl tensor.Layout) (denseX, denseY bool, call gemmCall) {
	nd := len(xl.Shape)
	m, k, n := xl.Shape[nd-2], xl.Shape[nd-1], yl.Shape[nd-1]
	batch := xl.Shape[:nd-2]
	dense := func(l tensor.Layout) tensor.Layout {
		return tensor.Layout{Shape: l.Shape, Strides: tensor.ContiguousStrides(l.Shape)}
	}
	lx, ly := xl, yl
	if _, _, ok := lx.MatrixOperand(); !ok {
		denseX, lx = true, dense(xl)
	}
	if _, _, ok := ly.MatrixOperand(); !ok {
		denseY, ly = true, dense(yl)
	}
	dstBatch := tensor.ContiguousStrides(append(append([]int{}, batch...), m, n))[:nd-2]
	cs, cst := tensor.Collapse(batch, lx.Strides[:nd-2], ly.Strides[:nd-2], dstBatch)
	if len(cs) > 1 {
		if !lx.IsContiguous() {
			denseX, lx = true, dense(xl)
		}
		if !ly.IsContiguous() {
			denseY, ly = true, dense(yl)
		}
		cs, cst = tensor.Collapse(batch, lx.Strides[:nd-2], ly.Strides[:nd-2], dstBatch)
	}
	if len(cs) > 1 { // one operand broadcasts over some batch dims only
		denseX, denseY, lx, ly = true, true, dense(xl), dense(yl)
		cs, cst = tensor.Collapse(batch, lx.Strides[:nd-2], ly.Strides[:nd-2], dstBatch)
	}
	tx, ldx, _ := lx.MatrixOperand()
	ty, ldy, _ := ly.MatrixOperand()
	count, sx, sy := cs[0], cst[0][0], cst[1][0]
	if count == 1 {
		sx, sy = 0, 0
	}
	call = rowMajor(tx, ty, m, n, k, [3]int{lx.Offset, ldx, sx}, [3]int{ly.Offset, ldy, sy}, [3]int{0, n, m * n}, count)
	return denseX, denseY, call
}

// headMats locates one operand's T×cols matrices for a batched call: the
// first matrix's element offset for batch group g, the leading dimension
// and the stride between the matrices of a call.
type headMats struct {
	base func(g int) int
	ld   int
	step int
}

// attnPlan says how the (batch, head) pairs are split into calls.
type attnPlan struct {
	calls, batch int
	perHead      bool // each call covers the batch of one head
	b, t, nh, hs int
}

func newAttnPlan(b, t, nh, hs int) attnPlan {
	p := attnPlan{b: b, t: t, nh: nh, hs: hs, calls: b, batch: nh}
	if nh < b {
		p.perHead, p.calls, p.batch = true, nh, b
	}
	return p
}

// qkvMat is the layout of the q (part 0), k (1) or v (2) matrices in a
// packed [B, T, 3C] tensor, or of y/dy (part -1) in [B, T, C].
func (p attnPlan) qkvMat(part int) headMats {
	c := p.nh * p.hs
	rowLen, off := 3*c, part*c
	if part < 0 {
		rowLen, off = c, 0
	}
	if p.perHead {
		return headMats{func(h int) int { return off + h*p.hs }, rowLen, p.t * rowLen}
	}
	return headMats{func(bi int) int { return bi*p.t*rowLen + off }, rowLen, p.hs}
}

// probMat is the layout of the T×T matrices of p [B, nh, T, T].
func (p attnPlan) probMat() headMats {
	tt := p.t * p.t
	if p.perHead {
		return headMats{func(h int) int { return h * tt }, p.t, p.nh * tt}
	}
	return headMats{func(bi int) int { return bi * p.nh * tt }, p.t, tt}
}

// product returns the cuBLAS calls of one product of the plan: for every
// (batch, head) pair, the row-major C = op(X)·op(Y) (C m×n, inner dim k)
// on the matrices that xm, ym and cm locate.
func (p attnPlan) product(tx, ty bool, m, n, k int, xm, ym, cm headMats) []gemmCall {
	calls := make([]gemmCall, p.calls)
	for g := range p.calls {
		calls[g] = rowMajor(tx, ty, m, n, k,
			[3]int{xm.base(g), xm.ld, xm.step}, [3]int{ym.base(g), ym.ld, ym.step}, [3]int{cm.base(g), cm.ld, cm.step}, p.batch)
	}
	return calls
}
