package tensor

import (
	"math"
	"testing"
)

// LinearCrossEntropy equals CrossEntropyIgnore of the head's logits, loss
// and gradients, in one chunk and in several (the last one short), with
// ignored rows, and with x or the weight frozen.
func TestLinearCrossEntropy(t *testing.T) {
	defer func(r int) { linearCERowsTest = r }(linearCERowsTest)
	gen := NewGenerator(5)
	const n, c, v = 37, 24, 50
	tg := make([]int, n)
	for i := range tg {
		tg[i] = gen.IntN(v)
	}
	tg[3], tg[20] = -1, -1
	targets := FromInts(tg, n)
	for _, rows := range []int{0, 16, 5} {
		for _, frozen := range []string{"", "x", "weight"} {
			linearCERowsTest = rows
			x := gen.Randn(n, c).MulScalar(2).SetRequiresGrad(frozen != "x")
			w := gen.Randn(v, c).SetRequiresGrad(frozen != "weight")
			got := LinearCrossEntropy(x, w, targets, -1)
			got.Backward()
			gx, gw := x.Grad(), w.Grad()
			x.ZeroGrad()
			w.ZeroGrad()
			want := CrossEntropyIgnore(x.MatMul(w.T()), targets, -1)
			want.Backward()
			near := func(what string, a, b *Tensor) {
				t.Helper()
				if (a == nil) != (b == nil) {
					t.Fatalf("rows %d, frozen %q: %s: gradient %v, want %v", rows, frozen, what, a != nil, b != nil)
				}
				if a == nil {
					return
				}
				as, bs := a.Float32s(), b.Float32s()
				for i := range bs {
					if d := math.Abs(float64(as[i] - bs[i])); d > 1e-6+1e-5*math.Abs(float64(bs[i])) {
						t.Fatalf("rows %d, frozen %q: %s[%d] = %v, want %v", rows, frozen, what, i, as[i], bs[i])
					}
				}
			}
			near("loss", got, want)
			near("x's gradient", gx, x.Grad())
			near("weight's gradient", gw, w.Grad())
		}
	}
}

// LinearCrossEntropy refuses mismatched shapes and targets out of range.
func TestLinearCrossEntropyErrors(t *testing.T) {
	x, w := Zeros(4, 3), Zeros(5, 3)
	for name, f := range map[string]func(){
		"shapes":  func() { LinearCrossEntropy(x, Zeros(5, 2), FromInts([]int{0, 1, 2, 3}, 4), -1) },
		"targets": func() { LinearCrossEntropy(x, w, FromInts([]int{0, 1}, 2), -1) },
		"range":   func() { LinearCrossEntropy(x, w, FromInts([]int{0, 1, 5, 3}, 4), -1) },
	} {
		func() {
			defer func() {
				if _, ok := recover().(*Error); !ok {
					t.Errorf("%s: no *Error panic", name)
				}
			}()
			f()
		}()
	}
}
