package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/tensor"
)

// MatMulCase is one product of the suite's matmul cases: a [Batch..., M, K]
// in layout A over ASize storage elements, b [Batch..., K, N] in layout B
// over BSize.
type MatMulCase struct {
	Batch        []int
	M, K, N      int
	A, B         tensor.Layout
	ASize, BSize int
}

// String names the case by its two layouts.
func (c MatMulCase) String() string {
	return fmt.Sprintf("a %v × b %v", view{c.A, c.ASize}, view{c.B, c.BSize})
}

// MatMulCases returns the products the suite checks: row- and
// column-major operands with leading dimensions padded at random (from r),
// batches with broadcast batch dims, an operand with doubled strides that
// needs a dense copy first, and degenerate sizes. Backend packages use it
// for their own product tests (cuda's TF32 products).
func MatMulCases(r *rand.Rand) []MatMulCase {
	type mm struct {
		batch      []int
		m, k, n    int
		bcA, bcB   []bool
		denseSteps bool // give a a matrix stride of 2 in both dims (no BLAS layout)
	}
	shapes := []mm{
		{nil, 1, 1, 1, nil, nil, false},
		{nil, 17, 33, 9, nil, nil, false},
		{nil, 128, 384, 256, nil, nil, false},
		{nil, 1, 64, 50, nil, nil, false},
		{nil, 50, 64, 1, nil, nil, false},
		{nil, 3, 2000, 5, nil, nil, false},
		{[]int{3}, 8, 16, 8, nil, nil, false},
		{[]int{2, 3}, 5, 7, 6, nil, []bool{true, false}, false},
		{[]int{2, 3}, 5, 7, 6, []bool{true, true}, nil, false},
		{[]int{4}, 6, 5, 3, nil, nil, true},
		{nil, 4, 0, 3, nil, nil, false},
		{[]int{0}, 4, 3, 3, nil, nil, false},
	}
	var out []MatMulCase
	for _, cs := range shapes {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				va := matLayout(cs.batch, cs.m, cs.k, ta, r.IntN(3), cs.bcA)
				vb := matLayout(cs.batch, cs.k, cs.n, tb, r.IntN(3), cs.bcB)
				if cs.denseSteps {
					for i := range va.l.Strides {
						va.l.Strides[i] *= 2
					}
					va.n *= 2
				}
				out = append(out, MatMulCase{cs.batch, cs.m, cs.k, cs.n, va.l, vb.l, va.n, vb.n})
			}
		}
	}
	return out
}

// matLayout returns a layout of shape [..., rows, cols] whose matrices are
// row-major (trans false) or column-major (trans true), with a leading
// dimension padded by pad, batch dims contiguous or broadcast (stride 0
// where bcast[i]).
func matLayout(batch []int, rows, cols int, trans bool, pad int, bcast []bool) view {
	nd := len(batch) + 2
	l := tensor.Layout{Shape: append(append([]int{}, batch...), rows, cols), Strides: make([]int, nd)}
	var matSize int
	if trans {
		ld := rows + pad
		l.Strides[nd-2], l.Strides[nd-1] = 1, ld
		matSize = ld * cols
	} else {
		ld := cols + pad
		l.Strides[nd-2], l.Strides[nd-1] = ld, 1
		matSize = ld * rows
	}
	size := max(matSize, 1)
	for i := len(batch) - 1; i >= 0; i-- {
		if bcast != nil && bcast[i] {
			l.Strides[i] = 0
			continue
		}
		l.Strides[i] = size
		size *= batch[i]
	}
	return view{l, size}
}

// matMulRef returns a @ b for a [batch, m, k] and b [batch, k, n] given
// densely (row-major, batches flattened), and for each output the bound
// γ_k·Σ|a||b| + u·|c| on a float32 product's error.
func matMulRef(a, b []float32, batch, m, k, n int) (want, allowed []float64) {
	want, allowed = make([]float64, batch*m*n), make([]float64, batch*m*n)
	for bi := range batch {
		for i := range m {
			for j := range n {
				var s, abs float64
				for p := range k {
					v := float64(a[(bi*m+i)*k+p]) * float64(b[(bi*k+p)*n+j])
					s += v
					abs += math.Abs(v)
				}
				o := (bi*m+i)*n + j
				want[o], allowed[o] = s, sumErr(k)*abs+u*math.Abs(s)+1e-30
			}
		}
	}
	return want, allowed
}

// testMatMul multiplies row- and column-major operands, padded leading
// dimensions, batches with broadcast batch dims, operands that need a
// dense copy first, and degenerate sizes, at full float32 precision.
func testMatMul(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, cs := range MatMulCases(r) {
		name := fmt.Sprintf("MatMul %v", cs)
		xa, xb := randn(r, cs.ASize), randn(r, cs.BSize)
		nb := numel(cs.Batch)
		n := nb * cs.M * cs.N
		dst := poisoned(b, tensor.Float32, n)
		b.MatMul(dst, b.FromFloat32s(xa), cs.A, b.FromFloat32s(xb), cs.B)
		want, allowed := matMulRef(gatherView(xa, cs.A), gatherView(xb, cs.B), nb, cs.M, cs.K, cs.N)
		checkBound(t, name, read(b, dst), want, allowed)
	}
}

// testMatMul16 multiplies bfloat16 and float16 operands (the suite's
// layouts: MatMulCases) on a backend that holds them: two operands of one
// 16-bit dtype into a dst of that dtype, and a 16-bit operand times a
// float32 one into a float32 dst (the CPU backend's mixed product). The
// reference is the float64 product of the 16-bit values; a product may sum
// in float32 (γ_k·Σ|a||b|) and round once to dst's dtype (its unit
// roundoff, and half its smallest subnormal).
func testMatMul16(t testing.TB, b tensor.Backend) {
	b16 := backend16(t, b)
	if b16 == nil {
		return
	}
	r := NewRand(t)
	for _, dt := range halfDTypes {
		from, to := halfConv(dt)
		round := func(x []float32) ([]uint16, []float32) {
			h, f := make([]uint16, len(x)), make([]float32, len(x))
			for i, v := range x {
				h[i] = from(v)
				f[i] = to(h[i])
			}
			return h, f
		}
		for ci, cs := range MatMulCases(r) {
			mixed := ci%3 == 2 // every third case: b float32
			name := fmt.Sprintf("MatMul %s×%s %v", dt, dt, cs)
			ha, xa := round(randn(r, cs.ASize))
			hb, xb := round(randn(r, cs.BSize))
			sb := b16.FromBits16(dt, hb)
			outDT := dt
			if mixed {
				name = fmt.Sprintf("MatMul %s×float32 %v", dt, cs)
				xb = randn(r, cs.BSize)
				sb = b.FromFloat32s(xb)
				outDT = tensor.Float32
			}
			nb := numel(cs.Batch)
			n := nb * cs.M * cs.N
			dst := b.Alloc(outDT, n)
			b.Fill(dst, whole(n), math.NaN())
			b.MatMul(dst, b16.FromBits16(dt, ha), cs.A, sb, cs.B)
			want, allowed := matMulRef(gatherView(xa, cs.A), gatherView(xb, cs.B), nb, cs.M, cs.K, cs.N)
			if outDT != tensor.Float32 {
				ur, tiny := unitRoundoff(dt)
				for i, w := range want {
					allowed[i] += ur*math.Abs(w) + tiny
				}
			}
			checkBound(t, name, read(b, dst), want, allowed)
		}
	}
}

// unitRoundoff returns the unit roundoff of a 16-bit float dtype and half
// its smallest subnormal (the absolute error of rounding a tiny value).
func unitRoundoff(dt tensor.DType) (u, tiny float64) {
	if dt == tensor.BFloat16 {
		return 0x1p-8, 0x1p-134
	}
	return 0x1p-11, 0x1p-25
}
