//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tensor/backendtest"
)

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
	SetAllowTF32(true)
	defer SetAllowTF32(false)
	for _, cs := range backendtest.MatMulCases(r) {
		name := fmt.Sprintf("MatMul tf32 %v", cs)
		a, b := upload(g, c, randn(r, cs.ASize)), upload(g, c, randn(r, cs.BSize))
		n := numel(cs.Batch) * cs.M * cs.N
		dst := poisoned(g, c, tensor.Float32, n)
		g.MatMul(dst.g, a.g, cs.A, b.g, cs.B)
		c.MatMul(dst.c, a.c, cs.A, b.c, cs.B)
		gv, cv := dst.read(g, c)
		compareMatMul(t, name, gv, cv, absProduct(c, a, b, cs.A, cs.B, n), tf32Rel(cs.K))
	}
}
