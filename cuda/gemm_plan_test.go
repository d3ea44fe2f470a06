package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/tensor"
)

// These tests run the cuBLAS calls that MatMul and the fused attention
// plan through a reference of cublasSgemmStridedBatched's column-major
// semantics (argument checks included), so the planning is tested without
// a GPU.

// runGemm is cublasSgemmStridedBatched on float64 slices; it fails t where
// cuBLAS would return CUBLAS_STATUS_INVALID_VALUE.
func runGemm(t *testing.T, c gemmCall, A, B, C []float64) {
	t.Helper()
	rowsA, rowsB := c.m, c.k
	if c.transA {
		rowsA = c.k
	}
	if c.transB {
		rowsB = c.n
	}
	if c.m < 0 || c.n < 0 || c.k < 0 || c.batch < 0 || c.lda < max(1, rowsA) || c.ldb < max(1, rowsB) || c.ldc < max(1, c.m) {
		t.Fatalf("invalid cuBLAS arguments: %+v", c)
	}
	opA := func(i, r, p int) float64 {
		if c.transA {
			return A[c.a+i*c.strideA+p+r*c.lda]
		}
		return A[c.a+i*c.strideA+r+p*c.lda]
	}
	opB := func(i, p, q int) float64 {
		if c.transB {
			return B[c.b+i*c.strideB+q+p*c.ldb]
		}
		return B[c.b+i*c.strideB+p+q*c.ldb]
	}
	for i := range c.batch {
		for r := range c.m {
			for q := range c.n {
				var s float64
				for p := range c.k {
					s += opA(i, r, p) * opB(i, p, q)
				}
				C[c.c+i*c.strideC+r+q*c.ldc] = s
			}
		}
	}
}

func offsetOf(l tensor.Layout, idx []int) int {
	off := l.Offset
	for d, i := range idx {
		off += i * l.Strides[d]
	}
	return off
}

// denseCopy returns the elements of view l in row-major order.
func denseCopy(data []float64, l tensor.Layout) []float64 {
	out := make([]float64, numel(l.Shape))
	for i := range out {
		out[i] = data[directOffset(l.Shape, l.Strides, i)+l.Offset]
	}
	return out
}

func randomData(r *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(r.IntN(19) - 9)
	}
	return out
}

// matView lays out [batch..., rows, cols] matrices row- or column-major
// with padded leading dimensions and batch dims dense, broadcast (stride
// 0) or with neither dim unit-stride (step 2).
func matView(r *rand.Rand, batch []int, rows, cols int) (tensor.Layout, int) {
	nd := len(batch) + 2
	l := tensor.Layout{Shape: append(append([]int{}, batch...), rows, cols), Strides: make([]int, nd), Offset: r.IntN(3)}
	step := 1 + r.IntN(2)
	size := 1
	if r.IntN(2) == 0 {
		l.Strides[nd-1], l.Strides[nd-2] = step, step*(cols+r.IntN(3))
		size = l.Strides[nd-2] * rows
	} else {
		l.Strides[nd-2], l.Strides[nd-1] = step, step*(rows+r.IntN(3))
		size = l.Strides[nd-1] * cols
	}
	for i := len(batch) - 1; i >= 0; i-- {
		if r.IntN(3) == 0 {
			continue // broadcast
		}
		l.Strides[i] = size
		size *= batch[i]
	}
	return l, l.Offset + size
}

func TestMatMulPlan(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	dense := 0
	for trial := range 400 {
		batch := make([]int, r.IntN(4))
		for i := range batch {
			batch[i] = 1 + r.IntN(3)
		}
		m, k, n := 1+r.IntN(5), 1+r.IntN(5), 1+r.IntN(5)
		xl, nx := matView(r, batch, m, k)
		yl, ny := matView(r, batch, k, n)
		x, y := randomData(r, nx), randomData(r, ny)
		denseX, denseY, call := planMatMul(xl, yl)
		if denseX || denseY {
			dense++
		}
		xs, ys := x, y
		if denseX {
			xs = denseCopy(x, xl)
		}
		if denseY {
			ys = denseCopy(y, yl)
		}
		got := make([]float64, numel(batch)*m*n)
		runGemm(t, call, ys, xs, got)
		bidx := make([]int, len(batch))
		for bi := range numel(batch) {
			rem := bi
			for d := len(batch) - 1; d >= 0; d-- {
				bidx[d] = rem % batch[d]
				rem /= batch[d]
			}
			for i := range m {
				for j := range n {
					var want float64
					for p := range k {
						want += x[offsetOf(xl, append(append([]int{}, bidx...), i, p))] * y[offsetOf(yl, append(append([]int{}, bidx...), p, j))]
					}
					if g := got[(bi*m+i)*n+j]; g != want {
						t.Fatalf("trial %d: x %v × y %v (dense %v %v, call %+v): element %d,%d,%d is %v, want %v",
							trial, xl, yl, denseX, denseY, call, bi, i, j, g, want)
					}
				}
			}
		}
	}
	if dense == 0 {
		t.Error("no trial needed a dense copy: the test does not cover that path")
	}
}

// TestAttentionPlan checks the six products of the fused attention, with
// the calls batched over the heads and over the batch.
func TestAttentionPlan(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, sh := range [][4]int{{1, 1, 1, 1}, {2, 5, 3, 4}, {4, 3, 2, 2}, {3, 6, 3, 1}} {
		bs, tt, nh, hs := sh[0], sh[1], sh[2], sh[3]
		c := nh * hs
		pl := newAttnPlan(bs, tt, nh, hs)
		if pl.calls != min(bs, nh) || pl.calls*pl.batch != bs*nh {
			t.Fatalf("plan for B=%d nh=%d: %d calls of %d", bs, nh, pl.calls, pl.batch)
		}
		qkv, y, p := randomData(r, bs*tt*3*c), randomData(r, bs*tt*c), randomData(r, bs*nh*tt*tt)
		// mat returns element (i, j) of the (b, h) matrix of an operand
		type mat func(b, h, i, j int) float64
		part := func(data []float64, which int) mat { // q, k, v (which 0..2) or y (-1)
			return func(b, h, i, j int) float64 {
				if which < 0 {
					return data[b*tt*c+i*c+h*hs+j]
				}
				return data[b*tt*3*c+i*3*c+which*c+h*hs+j]
			}
		}
		probs := func(data []float64) mat {
			return func(b, h, i, j int) float64 { return data[((b*nh+h)*tt+i)*tt+j] }
		}
		for _, pr := range []struct {
			name           string
			tx, ty         bool
			m, n, k        int
			x, y           mat
			xData, yData   []float64
			xm, ym, cm     headMats
			out            func([]float64) mat
			outLen, outPar int
		}{
			{"S=QKᵀ", false, true, tt, tt, hs, part(qkv, 0), part(qkv, 1), qkv, qkv, pl.qkvMat(0), pl.qkvMat(1), pl.probMat(), probs, bs * nh * tt * tt, 0},
			{"Y=PV", false, false, tt, hs, tt, probs(p), part(qkv, 2), p, qkv, pl.probMat(), pl.qkvMat(2), pl.qkvMat(-1), nil, bs * tt * c, -1},
			{"dV=PᵀdY", true, false, tt, hs, tt, probs(p), part(y, -1), p, y, pl.probMat(), pl.qkvMat(-1), pl.qkvMat(2), nil, bs * tt * 3 * c, 2},
			{"dP=dYVᵀ", false, true, tt, tt, hs, part(y, -1), part(qkv, 2), y, qkv, pl.qkvMat(-1), pl.qkvMat(2), pl.probMat(), probs, bs * nh * tt * tt, 0},
			{"dQ=dSK", false, false, tt, hs, tt, probs(p), part(qkv, 1), p, qkv, pl.probMat(), pl.qkvMat(1), pl.qkvMat(0), nil, bs * tt * 3 * c, 0},
			{"dK=dSᵀQ", true, false, tt, hs, tt, probs(p), part(qkv, 0), p, qkv, pl.probMat(), pl.qkvMat(0), pl.qkvMat(1), nil, bs * tt * 3 * c, 1},
		} {
			out := make([]float64, pr.outLen)
			for i := range out {
				out[i] = math.NaN()
			}
			for _, call := range pl.product(pr.tx, pr.ty, pr.m, pr.n, pr.k, pr.xm, pr.ym, pr.cm) {
				runGemm(t, call, pr.yData, pr.xData, out)
			}
			var o mat
			if pr.out != nil {
				o = pr.out(out)
			} else {
				o = part(out, pr.outPar)
			}
			for b := range bs {
				for h := range nh {
					for i := range pr.m {
						for j := range pr.n {
							var want float64
							for q := range pr.k {
								xv := pr.x(b, h, i, q)
								if pr.tx {
									xv = pr.x(b, h, q, i)
								}
								yv := pr.y(b, h, q, j)
								if pr.ty {
									yv = pr.y(b, h, j, q)
								}
								want += xv * yv
							}
							if g := o(b, h, i, j); g != want {
								t.Fatalf("%s B=%d T=%d nh=%d hs=%d: (b %d, h %d) element %d,%d is %v, want %v", pr.name, bs, tt, nh, hs, b, h, i, j, g, want)
							}
						}
					}
				}
			}
		}
	}
}
