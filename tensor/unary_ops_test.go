package tensor

import (
	"math"
	"testing"
)

// unaryFunc returns the specification of op: its float64 reference where
// the CPU backend computes it in float32 (GELU, GELUTanh), else fwd.
func unaryFunc(op UnaryOp, p UnaryParams) func(float32) float32 {
	u := &unaryOps[op]
	if u.ref != nil {
		return u.ref
	}
	return func(x float32) float32 { return u.fwd(x, p) }
}

// unaryGradFunc is unaryFunc for the derivative: g·f′(x) given x and
// y = f(x).
func unaryGradFunc(op UnaryOp, p UnaryParams) func(g, x, y float32) float32 {
	u := &unaryOps[op]
	if u.refGrad != nil {
		return func(g, x, y float32) float32 { return u.refGrad(g, x) }
	}
	return func(g, x, y float32) float32 { return u.grad(g, x, y, p) }
}

// TestUnaryTableComplete checks that every UnaryOp has a complete row, with
// a distinct name, and that ref and refGrad come together.
func TestUnaryTableComplete(t *testing.T) {
	seen := map[string]bool{}
	if len(unaryOps) != int(OpSquare)+1 {
		t.Fatalf("unaryOps has %d rows, want %d (one per UnaryOp)", len(unaryOps), OpSquare+1)
	}
	for op := range UnaryOp(len(unaryOps)) {
		u := &unaryOps[op]
		if u.name == "" || u.fwd == nil || u.grad == nil || u.cu == "" || u.cuGrad == "" {
			t.Errorf("op %d (%q): incomplete row (name, fwd, grad, cu and cuGrad are required)", op, u.name)
		}
		if seen[u.name] {
			t.Errorf("op %d: name %q used twice", op, u.name)
		}
		seen[u.name] = true
		if (u.ref == nil) != (u.refGrad == nil) {
			t.Errorf("%s: ref and refGrad must be set together", u.name)
		}
		if u.vecGrad != nil && u.vec == nil {
			t.Errorf("%s: a vector kernel for the derivative but none for the op", u.name)
		}
	}
}

// unaryTestInputs returns values that cover each op's domain and its
// special values.
func unaryTestInputs() []float32 {
	xs := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 2, -3, 1e-3, -1e-3, 10, -10, 30, -30, 100, -100,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	g := NewGenerator(7)
	for range 200 {
		xs = append(xs, float32(g.NormFloat64()*3))
	}
	return xs
}

// TestUnaryFastPathsMatchFwd checks each row's loop (strided and dense) and
// its dense path (with whichever kernels this processor runs, and with
// none) against fwd element by element, and denseGrad against grad where
// the row has no grad kernels: the fast paths must give fwd's bits, but
// for the kernels of the rows without ref (Exp, Tanh, Sigmoid), which
// must be within 1 ulp of them (unary_fast_test.go tests those further),
// and those of the rows with ref (GELU), which cpu_fast_test.go checks
// against the float64 reference.
func TestUnaryFastPathsMatchFwd(t *testing.T) {
	xs := unaryTestInputs()
	n := len(xs)
	p := UnaryParams{A: 1.5, B: 2}
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b) }
	for op := range UnaryOp(len(unaryOps)) {
		u := &unaryOps[op]
		if op == OpClamp {
			p.A = -0.5
		}
		want := make([]float32, n)
		for k, x := range xs {
			want[k] = u.fwd(x, p)
		}
		// strided: every other element of a doubled buffer
		s2 := make([]float32, 2*n)
		for k, x := range xs {
			s2[2*k] = x
		}
		got := make([]float32, n)
		u.strided(got, s2, 2, p)
		for k := range got {
			if !same(got[k], want[k]) {
				t.Errorf("%s strided(%v) = %v, fwd gives %v", u.name, xs[k], got[k], want[k])
			}
		}
		if u.ref != nil && u.vec != nil {
			continue // the kernels approximate ref; cpu_fast_test.go bounds them
		}
		u.dense(got, xs, p)
		for k := range got {
			if !same(got[k], want[k]) && (u.vec == nil || unaryULP(got[k], want[k]) > 1) {
				t.Errorf("%s dense(%v) = %v, fwd gives %v", u.name, xs[k], got[k], want[k])
			}
		}
		gs := make([]float32, n)
		for k := range gs {
			gs[k] = float32(k%7) - 3
		}
		u.denseGrad(got, gs, xs, want, p)
		for k := range got {
			if w := u.grad(gs[k], xs[k], want[k], p); !same(got[k], w) {
				t.Errorf("%s denseGrad(g=%v, x=%v) = %v, grad gives %v", u.name, gs[k], xs[k], got[k], w)
			}
		}
	}
}
