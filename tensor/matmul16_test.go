package tensor

import (
	"bytes"
	le "encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/wickml/wick/internal/cputime"
)

// matmulCase is one case of testdata/dtype/matmul_bf16.bin
// (scripts/gen_golden_bf16.py): PyTorch's bfloat16 product and gradients.
type matmulCase struct {
	transA, transB     bool
	sa, sb             []int // op(A) and op(B) as torch.matmul sees them
	a, b, y, g, ga, gb []uint16
	sy                 []int
	storedA, storedB   []int
}

func readMatMulGolden(t *testing.T) []matmulCase {
	t.Helper()
	raw, err := os.ReadFile("../testdata/dtype/matmul_bf16.bin")
	if err != nil {
		t.Fatalf("reading the bfloat16 matmul goldens (regenerate with /usr/bin/python3 scripts/gen_golden_bf16.py): %v", err)
	}
	if !bytes.HasPrefix(raw, []byte("WICKMM01")) {
		t.Fatal("testdata/dtype/matmul_bf16.bin: not a matmul golden file")
	}
	p := raw[8:]
	u32 := func() int {
		v := int(le.LittleEndian.Uint32(p))
		p = p[4:]
		return v
	}
	dims := func() []int {
		s := make([]int, u32())
		for i := range s {
			s[i] = u32()
		}
		return s
	}
	h16 := func(n int) []uint16 {
		s := make([]uint16, n)
		for i := range s {
			s[i] = le.LittleEndian.Uint16(p[2*i:])
		}
		p = p[2*n:]
		return s
	}
	stored := func(s []int, trans bool) []int {
		s = cloneInts(s)
		if trans {
			s[len(s)-1], s[len(s)-2] = s[len(s)-2], s[len(s)-1]
		}
		return s
	}
	cases := make([]matmulCase, u32())
	for i := range cases {
		c := &cases[i]
		fl := u32()
		c.transA, c.transB = fl&1 != 0, fl&2 != 0
		c.sa, c.sb = dims(), dims()
		c.storedA, c.storedB = stored(c.sa, c.transA), stored(c.sb, c.transB)
		c.a, c.b = h16(numel(c.sa)), h16(numel(c.sb))
		// the product's shape, as MatMul works it out (checked against
		// the golden's element count)
		c.sy = New(make([]float32, numel(c.sa)), c.sa...).MatMul(New(make([]float32, numel(c.sb)), c.sb...)).Shape()
		c.y, c.g = h16(numel(c.sy)), h16(numel(c.sy))
		c.ga, c.gb = h16(numel(c.sa)), h16(numel(c.sb))
	}
	if len(p) != 0 {
		t.Fatalf("testdata/dtype/matmul_bf16.bin: %d bytes left over", len(p))
	}
	return cases
}

// checkBF16Near fails t unless got (a BFloat16 tensor) is within bf16
// rounding of want: one bfloat16 ulp of the value, plus 2⁻¹⁶ of mag (the
// float32 Σ|a·b| of each element: the float32 sums of Wick and PyTorch
// take their terms in other orders, which moves a sum that cancels).
func checkBF16Near(t *testing.T, name string, got *Tensor, want []uint16, mag *Tensor) {
	t.Helper()
	if got.DType() != BFloat16 {
		t.Fatalf("%s: dtype %s, want bfloat16", name, got.DType())
	}
	g, m := got.Float32s(), mag.Float32s()
	for i, w := range want {
		wf := float64(BF16ToFloat32(w))
		tol := math.Abs(wf)*0x1p-8 + float64(m[i])*0x1p-16
		if d := math.Abs(float64(g[i]) - wf); !(d <= tol) {
			t.Fatalf("%s: element %d = %v, PyTorch %v (|Σ|a·b|| %v)", name, i, g[i], wf, m[i])
		}
	}
}

// TestMatMulBF16Golden checks bfloat16 × bfloat16 products (2-D, batched,
// broadcast, 1-D operands, operands stored transposed as Linear's weight
// is) and their gradients against PyTorch 1.13's on the CPU, which sums in
// float32 and rounds once: within checkBF16Near's bounds, on whichever
// kernel this machine and WICK_CPU select (VDPBF16PS, the bfloat16 dot
// products of few-row products, or blocks widened to float32).
func TestMatMulBF16Golden(t *testing.T) {
	for _, c := range readMatMulGolden(t) {
		name := fmt.Sprintf("%v·%v (stored transposed %v, %v)", c.sa, c.sb, c.transA, c.transB)
		// float32 leaves holding the bfloat16 values (exactly), cast to
		// bfloat16 in the graph: only float32 tensors require gradients,
		// and the cast's derivative widens the bfloat16 gradient exactly
		la := FromBits16(BFloat16, c.a, c.storedA...).ToDType(Float32).RequiresGrad()
		lb := FromBits16(BFloat16, c.b, c.storedB...).ToDType(Float32).RequiresGrad()
		a, b := la.BFloat16(), lb.BFloat16()
		if c.transA {
			a = a.Transpose(-1, -2)
		}
		if c.transB {
			b = b.Transpose(-1, -2)
		}
		y := a.MatMul(b)
		abs := func(x *Tensor) *Tensor { return x.Detach().ToDType(Float32).Abs() }
		checkBF16Near(t, name+" product", y, c.y, abs(a).MatMul(abs(b)))
		g := FromBits16(BFloat16, c.g).Reshape(c.sy...) // (a 0-d product too)
		y.BackwardWith(g)
		ga, gb := la.Grad(), lb.Grad()
		if c.transA {
			ga = ga.Transpose(-1, -2)
		}
		if c.transB {
			gb = gb.Transpose(-1, -2)
		}
		// the magnitudes of the gradients' sums: |G|·|op(B)|ᵀ and
		// |op(A)|ᵀ·|G| with 1-D operands made 2-D as MatMul makes them
		ag, bg := abs(g), abs(b)
		av := abs(a)
		var magA, magB *Tensor
		switch {
		case len(c.sa) == 1 && len(c.sb) == 1:
			magA, magB = bg.MulScalar(ag.Item()), av.MulScalar(ag.Item())
		case len(c.sa) == 1:
			magA = ag.Unsqueeze(0).MatMul(bg.Transpose(-1, -2)).Reshape(c.sa...)
			magB = av.Unsqueeze(1).MatMul(ag.Unsqueeze(0))
		case len(c.sb) == 1:
			magA = ag.Unsqueeze(1).MatMul(bg.Unsqueeze(0))
			magB = av.Transpose(-1, -2).MatMul(ag.Unsqueeze(1)).Reshape(c.sb...)
		default:
			magA = ag.MatMul(bg.Transpose(-1, -2)).sumTo(c.sa)
			magB = av.Transpose(-1, -2).MatMul(ag).sumTo(c.sb)
		}
		checkBF16Near(t, name+" gradient of A", ga.Contiguous().BFloat16(), c.ga, magA.Contiguous())
		checkBF16Near(t, name+" gradient of B", gb.Contiguous().BFloat16(), c.gb, magB.Contiguous())
	}
}

// TestMatMulMixedBF16 checks float32 activations times a bfloat16 weight
// (Linear's x·Wᵀ, at a token's row and at a batch's rows): a Float32
// product within float32 rounding of the product with the weight widened,
// and gradients in each operand's dtype (the weight's rounded once from
// the float32 one, which the cast in front of it widens again).
func TestMatMulMixedBF16(t *testing.T) {
	g := NewGenerator(11)
	for _, rows := range []int{1, 3, 20} {
		x := g.Randn(rows, 70).RequiresGrad()
		wl := g.Randn(37, 70).BFloat16().ToDType(Float32).RequiresGrad() // bfloat16 values
		w := wl.BFloat16()
		wf := wl.Detach().RequiresGrad()
		y := x.MatMul(w.T())
		want := x.Detach().MatMul(wf.T())
		if y.DType() != Float32 {
			t.Fatalf("rows %d: float32 × bfloat16 gave %s, want float32", rows, y.DType())
		}
		mag := x.Detach().Abs().MatMul(wf.Detach().Abs().T()).Float32s()
		for i, v := range y.Float32s() {
			if d := math.Abs(float64(v - want.Float32s()[i])); d > 1e-5*float64(mag[i]) {
				t.Fatalf("rows %d: element %d = %v, widened product %v", rows, i, v, want.Float32s()[i])
			}
		}
		up := g.Randn(rows, 37)
		y.BackwardWith(up)
		x2 := x.Detach().RequiresGrad()
		x2.MatMul(wf.T()).BackwardWith(up)
		// the weight's gradient reaches the float32 leaf through the
		// bfloat16 cast: rounded once to bfloat16 from the float32 sum
		for i, v := range wl.Grad().Float32s() {
			if want := wf.Grad().Float32s()[i]; math.Abs(float64(v-want)) > math.Abs(float64(want))*0x1p-8+1e-6 {
				t.Fatalf("rows %d: weight gradient %d = %v, float32 one %v", rows, i, v, want)
			}
		}
		for i, v := range x.Grad().Float32s() {
			if want := x2.Grad().Float32s()[i]; math.Abs(float64(v-want)) > 1e-5*(math.Abs(float64(want))+1) {
				t.Fatalf("rows %d: input gradient %d = %v, widened %v", rows, i, v, want)
			}
		}
	}
}

// TestMatMul16Widened checks larger bfloat16 and float16 products (the
// tiles, depth blocks and pairs of the kernels cut at their edges) against
// the float32 product of the widened operands rounded once to the dtype.
func TestMatMul16Widened(t *testing.T) {
	g := NewGenerator(12)
	for _, dt := range []DType{BFloat16, Float16} {
		for _, s := range [][3]int{{30, 50, 601}, {5, 64, 64}, {1, 100, 33}, {4, 9, 513}} {
			a := g.Randn(s[0], s[2]).ToDType(dt)
			b := g.Randn(s[1], s[2]).MulScalar(0.5).ToDType(dt).T() // stored as a weight
			y := a.MatMul(b)
			if y.DType() != dt {
				t.Fatalf("%s %v: dtype %s", dt, s, y.DType())
			}
			af, bf := a.ToDType(Float32), b.ToDType(Float32)
			want := af.MatMul(bf).ToDType(dt).Float32s()
			mag := af.Abs().MatMul(bf.Abs()).Float32s()
			ulp := 0x1p-8
			if dt == Float16 {
				ulp = 0x1p-11
			}
			for i, v := range y.Float32s() {
				if d := math.Abs(float64(v - want[i])); !(d <= math.Abs(float64(want[i]))*ulp+float64(mag[i])*0x1p-16) {
					t.Fatalf("%s %v: element %d = %v, widened product %v", dt, s, i, v, want[i])
				}
			}
		}
	}
}

// TestMatMul16Errors checks that an integer operand is refused with the
// op's name.
func TestMatMul16Errors(t *testing.T) {
	err := Catch(func() { Ones(2, 3).BFloat16().MatMul(FromInts([]int{1, 2, 3}, 3, 1)) })
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("MatMul")) {
		t.Fatalf("bfloat16 × int64: got %v, want a MatMul error", err)
	}
}

// BenchmarkMatMulBF16 times MatMul with bfloat16 weights against float32
// at generation's shape (a float32 token row times a 1536×576 weight's
// transpose) and at a training batch's (256×576 by the weight, both
// bfloat16, the result rounded to bfloat16), with the CPU time per op
// beside the wall time. Timings only.
func BenchmarkMatMulBF16(b *testing.B) {
	g := NewGenerator(1)
	w := g.Randn(1536, 576)
	wb := w.BFloat16()
	for _, s := range []struct {
		name string
		x    *Tensor
	}{{"gemv1x576x1536", g.Randn(1, 576)}, {"gemm256x576x1536", g.Randn(256, 576)}} {
		xb := s.x
		if s.x.Shape()[0] > 1 {
			xb = s.x.BFloat16()
		}
		for _, c := range []struct {
			name string
			x, w *Tensor
		}{{"fp32", s.x, w}, {"bf16", xb, wb}} {
			b.Run(s.name+"/"+c.name, func(b *testing.B) {
				cpu0 := cputime.Process()
				for b.Loop() {
					c.x.MatMul(c.w.T())
				}
				cputime.ReportPerOp(b, cpu0)
			})
		}
	}
}

// TestMatMul16Layouts checks 16-bit products of views that are not plain
// matrices (a permuted batch whose matrices have no unit stride, copied
// in their dtype first), of an empty depth (zeros, as in PyTorch) and of
// an empty result, against the float32 product of the widened operands.
func TestMatMul16Layouts(t *testing.T) {
	g := NewGenerator(13)
	for _, dt := range []DType{BFloat16, Float16} {
		// permuted batches: neither stride of a matrix is 1
		a := g.Randn(5, 3, 2).ToDType(dt).Permute(2, 0, 1) // [2, 5, 3]
		b := g.Randn(3, 2, 4).ToDType(dt).Permute(1, 0, 2) // [2, 3, 4]
		y := a.MatMul(b)
		want := a.ToDType(Float32).MatMul(b.ToDType(Float32)).ToDType(dt).Float32s()
		mag := a.ToDType(Float32).Abs().MatMul(b.ToDType(Float32).Abs()).Float32s()
		for i, v := range y.Float32s() {
			if d := math.Abs(float64(v - want[i])); !(d <= math.Abs(float64(want[i]))*0x1p-8+float64(mag[i])*0x1p-16) {
				t.Fatalf("%s permuted: element %d = %v, want %v", dt, i, v, want[i])
			}
		}
		z := Ones(3, 0).ToDType(dt).MatMul(Ones(0, 4).ToDType(dt))
		if z.DType() != dt || !slices.Equal(z.Shape(), []int{3, 4}) {
			t.Fatalf("%s empty depth: %s%v", dt, z.DType(), z.Shape())
		}
		for _, v := range z.Float32s() {
			if v != 0 {
				t.Fatalf("%s empty depth: %v, want zeros", dt, z.Float32s())
			}
		}
		if e := Ones(0, 3).ToDType(dt).MatMul(Ones(3, 4).ToDType(dt)); e.Numel() != 0 || e.DType() != dt {
			t.Fatalf("%s empty result: %s%v", dt, e.DType(), e.Shape())
		}
	}
}

// TestEmbedding16 checks Embedding on bfloat16 and float16 tables: the rows'
// bit patterns as they are, in the table's dtype, and the gradient (rows
// picked twice add up) as the float32 one rounded once.
func TestEmbedding16(t *testing.T) {
	g := NewGenerator(14)
	idx := FromInts([]int{3, 0, 3, 5, 1, 3}, 2, 3)
	for _, dt := range []DType{BFloat16, Float16} {
		leaf := g.Randn(6, 5).ToDType(dt).ToDType(Float32).RequiresGrad() // dt's values
		w := leaf.ToDType(dt)
		y := Embedding(w, idx)
		if y.DType() != dt || !slices.Equal(y.Shape(), []int{2, 3, 5}) {
			t.Fatalf("%s: %s%v, want %s[2 3 5]", dt, y.DType(), y.Shape(), dt)
		}
		want := Embedding(w.ToDType(Float32), idx).ToDType(dt)
		if !slices.Equal(y.Bits16(), want.Bits16()) {
			t.Fatalf("%s: rows %v, want %v", dt, y.Bits16(), want.Bits16())
		}
		up := g.Randn(2, 3, 5)
		y.BackwardWith(up.ToDType(dt))
		ref := leaf.Detach().RequiresGrad()
		Embedding(ref, idx).BackwardWith(up.ToDType(dt).ToDType(Float32))
		wantG := ref.Grad().ToDType(dt).Float32s()
		for i, v := range leaf.Grad().Float32s() {
			if v != wantG[i] {
				t.Fatalf("%s: gradient %d = %v, want %v", dt, i, v, wantG[i])
			}
		}
	}
}
