//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tensor/backendtest"
)

// matLayout is backendtest.MatLayout as a view.
func matLayout(batch []int, rows, cols int, trans bool, pad int, bcast []bool) view {
	l, n := backendtest.MatLayout(batch, rows, cols, trans, pad, bcast)
	return view{l, n}
}

// absProduct is the product of |a| and |b|: the scale of each output's
// rounding error.
func absProduct(c tensor.Backend, a, b pair, al, bl tensor.Layout, n int) []float32 {
	abs := func(s tensor.Storage, l tensor.Layout) tensor.Storage {
		out := c.Alloc(tensor.Float32, s.Len())
		c.Unary(tensor.OpAbs, tensor.UnaryParams{}, out, s, tensor.Layout{Shape: []int{s.Len()}, Strides: []int{1}})
		return out
	}
	dst := c.Alloc(tensor.Float32, n)
	c.MatMul(dst, abs(a.c, al), al, abs(b.c, bl), bl)
	return c.Float32s(dst, whole(n))
}

// compareMatMul checks |gpu − cpu| ≤ rel·Σ|a||b| + 1e-30 per element.
func compareMatMul(t *testing.T, name string, got, want, scale []float32, rel float64) {
	t.Helper()
	bad := 0
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if !(d <= rel*float64(scale[i])+1e-30) {
			if bad < 5 {
				t.Errorf("%s: element %d: GPU %v, CPU %v (scale %v)", name, i, got[i], want[i], scale[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", name, bad, len(want))
	}
}

// tf32Rel is the TF32 tolerance of a product with inner dim k, relative to
// Σ|a||b|. Tensor cores truncate each input to 10 mantissa bits: a' =
// a(1−δa) with 0 ≤ δa < 2^-10, so each product a'b' is within
// δa+δb < 2^-9 of ab, relative, all toward zero (the emulated cuBLAS
// truncates the same way). The float32 sums of the k products, in cuBLAS's
// order and in the CPU's, each add at most γ_k ≈ k·2^-24 of Σ|a||b|. So
// |gpu − cpu| ≤ (2^-9 + 2·γ_k)·Σ|a||b|: about 1.95e-3 for the shapes here,
// which rounding to nearest (the old emulation) would have kept under 1e-3.
func tf32Rel(k int) float64 {
	gamma := float64(k) * 0x1p-24 / (1 - float64(k)*0x1p-24)
	return 0x1p-9 + 2*gamma
}

// TestMatMulTF32 multiplies row- and column-major operands, padded leading
// dimensions, batches with broadcast batch dims, operands that need a
// dense copy and degenerate sizes with TF32 tensor-core math allowed,
// against the CPU backend, within tf32Rel(k) of Σ|a||b| (the size of a dot
// product's rounding error). Full float32 products are checked by the
// backend suite (TestBackend/MatMul).
func TestMatMulTF32(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	type mm struct {
		batch      []int
		m, k, n    int
		bcA, bcB   []bool
		denseSteps bool // give a a matrix stride of 2 in both dims (no BLAS layout)
	}
	cases := []mm{
		{nil, 1, 1, 1, nil, nil, false},
		{nil, 17, 33, 9, nil, nil, false},
		{nil, 128, 384, 256, nil, nil, false},
		{nil, 1, 64, 50, nil, nil, false},
		{nil, 50, 64, 1, nil, nil, false},
		{[]int{3}, 8, 16, 8, nil, nil, false},
		{[]int{2, 3}, 5, 7, 6, nil, []bool{true, false}, false},
		{[]int{2, 3}, 5, 7, 6, []bool{true, true}, nil, false},
		{[]int{4}, 6, 5, 3, nil, nil, true},
		{nil, 4, 0, 3, nil, nil, false},
		{[]int{0}, 4, 3, 3, nil, nil, false},
	}
	SetAllowTF32(true)
	defer SetAllowTF32(false)
	for _, cs := range cases {
		rel := tf32Rel(cs.k)
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				va := matLayout(cs.batch, cs.m, cs.k, ta, r.IntN(3), cs.bcA)
				vb := matLayout(cs.batch, cs.k, cs.n, tb, r.IntN(3), cs.bcB)
				if cs.denseSteps {
					nd := len(va.l.Shape)
					va.l.Strides[nd-2] *= 2
					va.l.Strides[nd-1] *= 2
					for i := range nd - 2 {
						va.l.Strides[i] *= 2
					}
					va.n *= 2
				}
				name := fmt.Sprintf("MatMul tf32 a %v × b %v", va, vb)
				a, b := upload(g, c, randn(r, va.n)), upload(g, c, randn(r, vb.n))
				n := numel(cs.batch) * cs.m * cs.n
				dst := poisoned(g, c, tensor.Float32, n)
				g.MatMul(dst.g, a.g, va.l, b.g, vb.l)
				c.MatMul(dst.c, a.c, va.l, b.c, vb.l)
				gv, cv := dst.read(g, c)
				compareMatMul(t, name, gv, cv, absProduct(c, a, b, va.l, vb.l, n), rel)
			}
		}
	}
}
