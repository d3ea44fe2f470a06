package tensor

import (
	"testing"

	"github.com/wickml/wick/internal/approx"
)

// TestMatMulTransposedOperandGrad checks the transposed gradient path of
// MatMul (operands stored column-major, like Linear's Wᵀ) against the same
// product on contiguous copies, on ragged shapes, with batch broadcasting.
func TestMatMulTransposedOperandGrad(t *testing.T) {
	ManualSeed(11)
	cases := []struct{ a, b []int }{
		{[]int{5, 3}, []int{3, 7}},
		{[]int{1, 4}, []int{4, 2}},
		{[]int{6, 1}, []int{1, 5}},
		{[]int{2, 5, 3}, []int{3, 4}},
		{[]int{2, 5, 3}, []int{2, 3, 4}},
		{[]int{3, 4}, []int{2, 4, 6}},
	}
	for _, c := range cases {
		for _, tr := range [][2]bool{{false, true}, {true, false}, {true, true}} {
			// the stored tensors; a transposed operand is the view of
			// its transpose
			mk := func(shape []int, transposed bool) (leaf, op *Tensor) {
				if !transposed {
					leaf = Randn(shape...).RequiresGrad()
					return leaf, leaf
				}
				s := cloneInts(shape)
				s[len(s)-1], s[len(s)-2] = s[len(s)-2], s[len(s)-1]
				leaf = Randn(s...).RequiresGrad()
				return leaf, leaf.Transpose(-1, -2)
			}
			la, a := mk(c.a, tr[0])
			lb, b := mk(c.b, tr[1])
			ra := la.Detach().RequiresGrad()
			rb := lb.Detach().RequiresGrad()
			refA, refB := ra, rb
			if tr[0] {
				refA = ra.Transpose(-1, -2).Contiguous()
			}
			if tr[1] {
				refB = rb.Transpose(-1, -2).Contiguous()
			}
			out := a.MatMul(b)
			ref := refA.MatMul(refB)
			gy := Randn(out.Shape()...)
			out.BackwardWith(gy)
			ref.BackwardWith(gy)
			approx.EqualTensor(t, "out", out, ref, 1e-5, 1e-6)
			approx.EqualTensor(t, "grad a", la.Grad(), ra.Grad(), 1e-5, 1e-6)
			approx.EqualTensor(t, "grad b", lb.Grad(), rb.Grad(), 1e-5, 1e-6)
		}
	}
}
