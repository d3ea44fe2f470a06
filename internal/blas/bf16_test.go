package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/cputime"
	"github.com/wickml/wick/internal/parallel"
	"github.com/wickml/wick/internal/testseed"
)

// toBF16 rounds f to the nearest bfloat16, ties to even (NaN not needed
// here).
func toBF16(f float32) uint16 {
	b := math.Float32bits(f)
	return uint16((b + 0x7FFF + (b>>16)&1) >> 16)
}

// randMat16 returns a rows×cols op(M) stored transposed or not, with a row
// stride of its width plus pad, in bfloat16 (h) or float32 (!h) with
// values that are exact bfloat16s either way.
func randMat16(r *rand.Rand, rows, cols int, trans, h bool, pad int) Mat16 {
	sr, sw := rows, cols
	if trans {
		sr, sw = cols, rows
	}
	ld := sw + pad
	n := max(0, (sr-1)*ld+sw)
	o := Mat16{LD: ld, Trans: trans}
	if h {
		o.H = make([]uint16, n)
		for i := range o.H {
			o.H[i] = toBF16(float32(r.NormFloat64()))
		}
	} else {
		o.F = make([]float32, n)
		for i := range o.F {
			o.F[i] = bf16(toBF16(float32(r.NormFloat64())))
		}
	}
	return o
}

// product64 returns element (i, j) of op(A)·op(B) over k depths in
// float64, and the sum of its terms' magnitudes: the reference and the
// scale of its tolerance.
func product64(a, b Mat16, i, j, k int) (want, mag float64) {
	for q := range k {
		v := float64(a.at(i, q)) * float64(b.at(q, j))
		want += v
		mag += math.Abs(v)
	}
	return want, mag
}

// roundMat16 returns o's float32 copy made inexact (each value moved by
// less than a bfloat16 step, some onto ties), to be rounded as it is read.
func roundMat16(r *rand.Rand, o Mat16) Mat16 {
	f := make([]float32, len(o.F))
	for i, v := range o.F {
		b := math.Float32bits(v)
		switch r.IntN(4) {
		case 0:
			b += 0x8000 // a tie
		default:
			b += uint32(r.IntN(0x10000))
		}
		f[i] = math.Float32frombits(b)
	}
	return Mat16{F: f, LD: o.LD, Trans: o.Trans, Round: true}
}

// TestGemmBF16Round checks that a product of float32 operands rounded as
// they are read (Round) is the product of their bfloat16 copies bit for
// bit, on each path this machine runs, with values that round up, down,
// to even on ties, subnormals (some rounding up to the smallest normal),
// infinities and NaNs, in every layout and across pair, tile and block
// edges.
func TestGemmBF16Round(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 10))
	special := []uint32{0x007FFFFF, 0x007F8000, 0x00008000, 0x80000001, 0x7F800000, 0xFF800000, 0x7FC00001, 0x7F800001, 0xFFFFFFFF, 0x3F808000, 0x3F818000, 0x7F7FFFFF}
	value := func() float32 {
		if r.IntN(50) == 0 {
			return math.Float32frombits(special[r.IntN(len(special))])
		}
		return float32(r.NormFloat64())
	}
	mat := func(rows, cols int, trans bool) Mat16 {
		sr, sw := rows, cols
		if trans {
			sr, sw = cols, rows
		}
		ld := sw + r.IntN(3)
		f := make([]float32, max(0, (sr-1)*ld+sw))
		for i := range f {
			f[i] = value()
		}
		return Mat16{F: f, LD: ld, Trans: trans, Round: true}
	}
	hcopy := func(o Mat16) Mat16 {
		h := make([]uint16, len(o.F))
		for i, v := range o.F {
			h[i] = rne16(v)
		}
		return Mat16{H: h, LD: o.LD, Trans: o.Trans}
	}
	shapes := [][3]int{{1, 37, 64}, {3, 40, 17}, {13, 65, 301}, {25, 70, 800}, {64, 64, 32}, {40, 7, 261}, {66, 96, 800}}
	for _, p := range bf16Paths() {
		restore := p.use()
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			for combo := range 16 {
				ta, tb, ar, br := combo&1 != 0, combo&2 != 0, combo&4 != 0, combo&8 != 0
				a, b := mat(m, k, ta), mat(k, n, tb)
				ha, hb := hcopy(a), hcopy(b)
				if !ar {
					a = ha // the other operand bfloat16
				}
				if !br {
					b = hb
				}
				got, want := make([]float32, m*n), make([]float32, m*n)
				GemmBF16(m, n, k, a, b, got, n, 0)
				GemmBF16(m, n, k, ha, hb, want, n, 0)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: %dx%dx%d A trans=%v round=%v, B trans=%v round=%v: C[%d] = %v (%#x), the rounded copies' %v (%#x)",
							p.name, m, n, k, ta, ar, tb, br, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
			}
		}
		restore()
	}
}

// bf16Path is one path of GemmBF16, as settings of dpbf16Asm, dot16Asm
// and amxAsm (with amxTile, its kernel).
type bf16Path struct {
	name           string
	dp, dot16, amx bool
	tile           func(kq int, a *uint16, rs int, b *uint32, c *float32, ldc, acc int, cfg *[64]byte)
}

// use sets the path's switches and returns a function that restores the
// ones before.
func (p bf16Path) use() (restore func()) {
	dp, d16, amx, tile := dpbf16Asm, dot16Asm, amxAsm, amxTile
	dpbf16Asm, dot16Asm, amxAsm = p.dp, p.dot16, p.amx
	if p.tile != nil {
		amxTile = p.tile
	}
	return func() { dpbf16Asm, dot16Asm, amxAsm, amxTile = dp, d16, amx, tile }
}

// bf16Paths are the paths of GemmBF16 this build and machine run: "widen"
// (blocks widened to float32 for Sgemm, few-row products as dot products
// in Go), "avx2" (the bfloat16 dot kernel of few-row products),
// "avx512bf16" (and the VDPBF16PS micro-kernel), and the AMX path's
// packing and blocking on its kernel's Go twin ("amx-twin", everywhere:
// its tile kernel needs AMX to run) or on the tiles themselves ("amx",
// where WICK_CPU=amx runs them).
func bf16Paths() []bf16Path {
	ps := []bf16Path{{name: "widen"}}
	if dot16Asm {
		ps = append(ps, bf16Path{name: "avx2", dot16: true})
	}
	if dpbf16Asm {
		ps = append(ps, bf16Path{name: "avx512bf16", dp: true, dot16: true})
	}
	ps = append(ps, bf16Path{name: "amx-twin", dp: dpbf16Asm, dot16: dot16Asm, amx: true, tile: amxTileGo})
	if cpu.HasAMXBF16 {
		ps = append(ps, bf16Path{name: "amx", dp: true, dot16: true, amx: true}) // amxTile: the tiles' kernel
	}
	return ps
}

// TestGemmBF16 checks GemmBF16 on each path this machine runs against a
// float64 product of the same values, for every combination of bfloat16
// and float32 operands, transposed or not, with padded strides, ragged
// sizes (tiles and pairs of depths cut at the edges, odd depths, more
// than one block of depths and of widened columns) and the
// few-row shapes of the dot-product path: within 2⁻²⁰ of Σ|a·b| per
// element (float32 sums of up to a few hundred terms in any order).
func TestGemmBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 7))
	shapes := [][3]int{{1, 1, 1}, {1, 37, 576}, {3, 40, 17}, {4, 33, 64}, {5, 31, 9}, {12, 32, 2}, {13, 65, 301}, {25, 70, 513}, {40, 7, 260}, {13, 40, 1000}, {6, 530, 20}, {70, 64, 770}}
	for _, p := range bf16Paths() {
		restore := p.use()
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			for combo := range 36 {
				// each operand float32, bfloat16 or float32 rounded
				ak, bk, ta, tb := combo%3, combo/3%3, combo/9%2 != 0, combo/18 != 0
				if ak == 0 && bk == 0 {
					continue
				}
				ah, bh := ak != 0, bk != 0
				a := randMat16(r, m, k, ta, ak == 1, r.IntN(3))
				b := randMat16(r, k, n, tb, bk == 1, r.IntN(3))
				if ak == 2 {
					a = roundMat16(r, a)
				}
				if bk == 2 {
					b = roundMat16(r, b)
				}
				ldc := n + 1
				c := make([]float32, (m-1)*ldc+n)
				for i := range c {
					c[i] = float32(math.NaN()) // every element must be written
				}
				GemmBF16(m, n, k, a, b, c, ldc, 0)
				name := fmt.Sprintf("%s: %dx%dx%d A bf16=%v trans=%v, B bf16=%v trans=%v", p.name, m, n, k, ah, ta, bh, tb)
				for i := range m {
					for j := range n {
						want, mag := product64(a, b, i, j, k)
						if got := float64(c[i*ldc+j]); !(math.Abs(got-want) <= mag*0x1p-20) {
							t.Fatalf("%s: C[%d,%d] = %v, want %v", name, i, j, got, want)
						}
					}
				}
			}
		}
		restore()
	}
}

// TestGemmBF16Float32 checks that GemmBF16 with two float32 operands is
// Sgemm, bit for bit.
func TestGemmBF16Float32(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 8))
	m, n, k := 7, 9, 33
	a, b := randMat16(r, m, k, false, false, 0), randMat16(r, k, n, true, false, 0)
	got, want := make([]float32, m*n), make([]float32, m*n)
	GemmBF16(m, n, k, a, b, got, n, 1)
	Sgemm(false, true, m, n, k, a.F, a.LD, b.F, b.LD, want, n, false, 1)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("element %d: %v, Sgemm %v", i, got[i], want[i])
		}
	}
}

// BenchmarkGemmBF16 times bfloat16 products against the float32 ones of
// the same shapes on one thread: generation's x·Wᵀ with a bfloat16 weight
// (1×576 by 576×1536, float32 activations, a weight that stays in cache;
// 1×768 by GPT-2's 768×50257 head, one that does not) and a training-size product
// with both operands bfloat16 (256×576 by 576×1536), each on the paths
// this machine runs, with the CPU time per op beside the wall time (less
// disturbed on a shared machine). Timings only (no pass/fail).
func BenchmarkGemmBF16(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct {
		name    string
		m, n, k int
		ah      bool
	}{{"gemv1x576x1536", 1, 1536, 576, false}, {"gemv1x768x50257", 1, 50257, 768, false}, {"gemm256x576x1536", 256, 1536, 576, true}} {
		a := randMat16(r, s.m, s.k, false, s.ah, 0)
		w := randMat16(r, s.k, s.n, true, true, 0)
		af := make([]float32, s.m*s.k)
		for i := range af {
			af[i] = a.at(i/s.k, i%s.k)
		}
		wf := make([]float32, s.n*s.k)
		widen16(wf, w.H)
		c := make([]float32, s.m*s.n)
		flops := 2 * float64(s.m*s.n*s.k)
		b.Run(s.name+"/fp32", func(b *testing.B) {
			cpu0 := cputime.Process()
			for b.Loop() {
				Sgemm(false, true, s.m, s.n, s.k, af, s.k, wf, s.k, c, s.n, false, 1)
			}
			cputime.ReportPerOp(b, cpu0)
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		for _, p := range bf16Paths() {
			if p.name == "amx-twin" {
				continue // a test's kernel, not one to time
			}
			b.Run(s.name+"/bf16-"+p.name, func(b *testing.B) {
				restore := p.use()
				defer restore()
				cpu0 := cputime.Process()
				for b.Loop() {
					GemmBF16(s.m, s.n, s.k, a, w, c, s.n, 1)
				}
				cputime.ReportPerOp(b, cpu0)
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// TestGemmBF16WidenThreads checks the widening path (a prompt's pass over
// bfloat16 weights: float32 A, bfloat16 B stored n×k, and both bfloat16,
// as AVX2-only machines run them) on blocks large enough to be widened on
// the pool: on one thread and on all of them, the bits are the same and
// within 2⁻²⁰ of Σ|a·b| of the float64 product.
func TestGemmBF16WidenThreads(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 9))
	restore := bf16Path{name: "widen"}.use()
	defer restore()
	m, n, k := 33, 700, 300
	for _, ah := range []bool{false, true} {
		a := randMat16(r, m, k, false, ah, 3)
		b := randMat16(r, k, n, true, true, 1)
		one, all := make([]float32, m*n), make([]float32, m*n)
		GemmBF16(m, n, k, a, b, one, n, 1)
		GemmBF16(m, n, k, a, b, all, n, max(2, parallel.Workers()))
		for i := range m {
			for j := range n {
				want, mag := product64(a, b, i, j, k)
				got := all[i*n+j]
				if math.Float32bits(got) != math.Float32bits(one[i*n+j]) {
					t.Fatalf("A bf16=%v: C[%d,%d] = %v on the pool, %v on one thread", ah, i, j, got, one[i*n+j])
				}
				if !(math.Abs(float64(got)-want) <= mag*0x1p-20) {
					t.Fatalf("A bf16=%v: C[%d,%d] = %v, want %v", ah, i, j, got, want)
				}
			}
		}
	}
}
