package kernels

import (
	"math"
	"unsafe"

	"github.com/wickml/wick/internal/cpu"
)

// The slice kernels of the CPU backend's elementwise ops, softmax rows,
// AdamW and float64 sums: each runs the AVX-512 kernel of kernels_amd64.s
// on whole blocks of 16 elements where it runs, the AVX2 one on a block of
// 8 after them and Go on the rest.

// GELUVec writes GELU32(x[i]) (within the bounds that tensor's tests set
// against the float64 reference) for the longest prefix of dst that the
// vector kernels take, and returns its length: a multiple of 8, 0 where no
// vector kernel runs. The caller computes the rest.
func GELUVec(dst, x []float32) int { return vec(dst, x, geluAVX512, geluAVX2) }

// GELUGradVec writes g[i]·(Φ(x[i]) + x[i]·φ(x[i])) for a prefix of dst, as
// GELUVec does.
func GELUGradVec(dst, g, x []float32) int { return vec2(dst, g, x, geluGradAVX512, geluGradAVX2) }

// ExpVec writes e^x[i] for a prefix of dst, as GELUVec does, computed in
// float32 with one final rounding: within 1 ulp of float32(math.Exp(x)).
func ExpVec(dst, x []float32) int { return vec(dst, x, expAVX512, expAVX2) }

// TanhVec writes tanh(x[i]) for a prefix of dst, as GELUVec does, computed
// in float64 and rounded once: within 1 ulp of float32(math.Tanh(x)) and
// almost always equal to it.
func TanhVec(dst, x []float32) int { return vec(dst, x, tanhAVX512, tanhAVX2) }

// SigmoidVec writes 1/(1 + e^−x[i]) for a prefix of dst, as TanhVec does.
func SigmoidVec(dst, x []float32) int { return vec(dst, x, sigmoidAVX512, sigmoidAVX2) }

// vec runs k512 on whole blocks of 16 and k2 on a block of 8 after them,
// where they run, and returns how many elements they wrote.
func vec(dst, x []float32, k512, k2 func(dst, x *float32, n int)) int {
	x = x[:len(dst)]
	done := 0
	if n := len(dst) &^ 15; avx512 && n > 0 {
		k512(&dst[0], &x[0], n)
		done = n
	}
	if n := (len(dst) - done) &^ 7; avx2 && n > 0 {
		k2(&dst[done], &x[done], n)
		done += n
	}
	return done
}

// vec2 is vec for kernels of two inputs.
func vec2(dst, g, x []float32, k512, k2 func(dst, g, x *float32, n int)) int {
	g, x = g[:len(dst)], x[:len(dst)]
	done := 0
	if n := len(dst) &^ 15; avx512 && n > 0 {
		k512(&dst[0], &g[0], &x[0], n)
		done = n
	}
	if n := (len(dst) - done) &^ 7; avx2 && n > 0 {
		k2(&dst[done], &g[done], &x[done], n)
		done += n
	}
	return done
}

// ExpSub replaces x[i] by e^(x[i]−m) (Exp32) and returns their sum.
func ExpSub(x []float32, m float32) float32 { return ExpSubTo(x, x, m) }

// ExpSubTo writes e^(x[i]−m) (Exp32) into dst[i] and returns their sum
// (in float32, taken over 16 or 8 lanes on the vector paths: the paths
// differ in the order of the additions).
func ExpSubTo(dst, x []float32, m float32) float32 {
	x = x[:len(dst)]
	var sum float32
	if n := len(dst) &^ 15; avx512 && n > 0 {
		sum = expSubToAVX512(&dst[0], &x[0], n, m)
		dst, x = dst[n:], x[n:]
	}
	if n := len(dst) &^ 7; avx2 && n > 0 {
		sum += expSubToAVX2(&dst[0], &x[0], n, m)
		dst, x = dst[n:], x[n:]
	}
	for j, v := range x {
		e := Exp32(v - m)
		dst[j] = e
		sum += e
	}
	return sum
}

// LogSumExp returns log Σ e^x for a non-empty row, using scratch
// (len(x) elements) for the exponentials. It reports false, leaving the
// work to the caller's float64 reference, when the row's maximum is not
// finite.
func LogSumExp(x, scratch []float32) (float32, bool) {
	m := Max(x)
	if m-m != 0 { // NaN or ±Inf
		return 0, false
	}
	return m + float32(math.Log(float64(ExpSubTo(scratch[:len(x)], x, m)))), true
}

// SoftmaxScaledTo writes scale·softmax(x) into dst for a non-empty row.
// It reports false, having written nothing useful, when the row's maximum
// is not finite.
func SoftmaxScaledTo(dst, x []float32, scale float32) bool {
	m := Max(x)
	if m-m != 0 {
		return false
	}
	dst = dst[:len(x)]
	Scale(dst, scale/ExpSubTo(dst, x, m))
	return true
}

// AdamWConsts are the float32 scalars of one AdamW step, in the order
// the assembly reads them: m ← B1·m + A1·g, v ← B2·v + A2·g²,
// p ← Decay·p − StepSize·m/(√v/BC2Sqrt + Eps).
type AdamWConsts struct {
	B1, A1, B2, A2, BC2Sqrt, Eps, StepSize, Decay float32
}

// AdamW is the update loop of tensor's CPU AdamW over equal-length slices
// (the same float32 operations on every path, bit for bit).
func AdamW(p, g, ms, vs []float32, c *AdamWConsts) {
	n := len(p)
	g, ms, vs = g[:n], ms[:n], vs[:n]
	if n16 := n &^ 15; avx512 && n16 > 0 {
		adamwAVX512(&p[0], &g[0], &ms[0], &vs[0], n16, c)
		p, g, ms, vs = p[n16:], g[n16:], ms[n16:], vs[n16:]
	}
	if n8 := len(p) &^ 7; avx2 && n8 > 0 {
		adamwAVX2(&p[0], &g[0], &ms[0], &vs[0], n8, c)
		p, g, ms, vs = p[n8:], g[n8:], ms[n8:], vs[n8:]
	}
	adamwGo(p, g, ms, vs, c)
}

// SumF64 returns the sum of x accumulated in float64: the AVX-512 and AVX2
// kernels on whole blocks of 16 and 8 where they run, then four independent
// chains (a single chain is bound by the latency of the additions).
func SumF64(x []float32) float64 {
	var s float64
	if n := len(x) &^ 15; avx512 && n > 0 {
		s = sumF64AVX512(&x[0], n)
		x = x[n:]
	}
	if n := len(x) &^ 7; avx2 && n > 0 {
		s += sumF64AVX2(&x[0], n)
		x = x[n:]
	}
	return s + sumF64Go(x)
}

// Max returns the largest element of a non-empty x, in four independent
// chains after the vector kernels (one chain is bound by the latency of
// max). It returns NaN if x holds one.
func Max(x []float32) float32 {
	m0 := x[0]
	i := 0
	if n := len(x) &^ 15; avx512 && n > 0 {
		m0 = maxAVX512(&x[0], n)
		i = n
	} else if n := len(x) &^ 7; avx2 && n > 0 {
		m0 = maxAVX2(&x[0], n)
		i = n
	}
	m1, m2, m3 := m0, m0, m0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		m0 = max(m0, v[0])
		m1 = max(m1, v[1])
		m2 = max(m2, v[2])
		m3 = max(m3, v[3])
	}
	for ; i < len(x); i++ {
		m0 = max(m0, x[i])
	}
	return max(max(m0, m1), max(m2, m3))
}

// SoftmaxRow writes softmax(x), or log-softmax(x) if log, of a non-empty
// row into y, with Exp32 (the vector kernels where they run) and a float32
// sum. It reports false, having written nothing useful, when the row's
// maximum is not finite (NaN, an all −Inf row, +Inf): the caller's float64
// reference handles those.
func SoftmaxRow(y, x []float32, log bool) bool {
	m := Max(x)
	if m-m != 0 {
		return false
	}
	y = y[:len(x)]
	sum := ExpSubTo(y, x, m)
	if log {
		LogSoftmaxOut(y, x, m, float32(math.Log(float64(sum)))) // softmax.go
		return true
	}
	Scale(y, 1/sum)
	return true
}

// Scale multiplies x by k in place.
func Scale(x []float32, k float32) {
	if n := len(x) &^ 15; avx512 && n > 0 {
		scaleAVX512(&x[0], n, k)
		x = x[n:]
	}
	if n := len(x) &^ 7; avx2 && n > 0 {
		scaleAVX2(&x[0], n, k)
		x = x[n:]
	}
	for j := range x {
		x[j] *= k
	}
}

// ArithOp names one of the four arithmetic ops of Arith.
type ArithOp int

// The arithmetic ops of Arith.
const (
	Add ArithOp = iota
	Sub
	Mul
	Div
)

// StreamMinElems is the smallest output, in elements, that callers of
// Arith should write with non-temporal stores: one that does not fit in a
// core's L2 (1 MiB where CPUID does not tell).
var StreamMinElems = cmpOr(cpu.L2, 1<<20) / 4

func cmpOr(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// Arith writes d[i] = a[i] op b[i] (IEEE results, the same on every path)
// with the AVX-512 and AVX2 kernels where they run, the tail in Go.
//
// stream asks for non-temporal stores, which the caller chooses for an
// output of at least StreamMinElems (of which d may be one worker's part):
// such an output does not stay in the core's caches anyway, and plain
// stores would first read every line of it from memory (the fresh buffer
// of an allocating op is rarely cached). The elements before the first
// vector-aligned one, and the tail, are written with plain stores.
func Arith(op ArithOp, d, a, b []float32, stream bool) {
	a, b = a[:len(d)], b[:len(d)]
	n := len(d) &^ 7
	if !avx2 || n == 0 {
		arithGo(op, d, a, b)
		return
	}
	if stream {
		width := 32
		if avx512 {
			width = 64
		}
		// elements before the first aligned one (d is 4-byte aligned)
		h := (width - int(uintptr(unsafe.Pointer(&d[0])))%width) % width / 4
		m := (len(d) - h) &^ (width/4 - 1)
		if m > 0 {
			Arith(op, d[:h], a[:h], b[:h], false)
			dm, am, bm := &d[h], &a[h], &b[h]
			switch {
			case avx512 && op == Add:
				addNTAVX512(dm, am, bm, m)
			case avx512 && op == Sub:
				subNTAVX512(dm, am, bm, m)
			case avx512 && op == Mul:
				mulNTAVX512(dm, am, bm, m)
			case avx512:
				divNTAVX512(dm, am, bm, m)
			case op == Add:
				addNTAVX2(dm, am, bm, m)
			case op == Sub:
				subNTAVX2(dm, am, bm, m)
			case op == Mul:
				mulNTAVX2(dm, am, bm, m)
			default:
				divNTAVX2(dm, am, bm, m)
			}
			Arith(op, d[h+m:], a[h+m:], b[h+m:], false)
			return
		}
	}
	n16 := 0
	if avx512 {
		n16 = len(d) &^ 15
	}
	if n16 > 0 {
		switch op {
		case Add:
			addAVX512(&d[0], &a[0], &b[0], n16)
		case Sub:
			subAVX512(&d[0], &a[0], &b[0], n16)
		case Mul:
			mulAVX512(&d[0], &a[0], &b[0], n16)
		case Div:
			divAVX512(&d[0], &a[0], &b[0], n16)
		}
	}
	if n > n16 {
		d8, a8, b8 := d[n16:], a[n16:], b[n16:]
		switch op {
		case Add:
			addAVX2(&d8[0], &a8[0], &b8[0], n-n16)
		case Sub:
			subAVX2(&d8[0], &a8[0], &b8[0], n-n16)
		case Mul:
			mulAVX2(&d8[0], &a8[0], &b8[0], n-n16)
		case Div:
			divAVX2(&d8[0], &a8[0], &b8[0], n-n16)
		}
	}
	arithGo(op, d[n:], a[n:], b[n:])
}

// DotF64 returns Σ a[i]·b[i] accumulated in float64: the AVX-512 and AVX2
// kernels on whole blocks of 16 and 8 where they run, then four chains.
func DotF64(a, b []float32) float64 {
	b = b[:len(a)]
	var s float64
	if n := len(a) &^ 15; avx512 && n > 0 {
		s = dotF64AVX512(&a[0], &b[0], n)
		a, b = a[n:], b[n:]
	}
	if n := len(a) &^ 7; avx2 && n > 0 {
		s += dotF64AVX2(&a[0], &b[0], n)
		a, b = a[n:], b[n:]
	}
	return s + dotF64Go(a, b)
}

// SoftmaxGrad is one row of the softmax derivative: d = y⊙(g − g·y), or for
// log-softmax (log) d = g − e^y·Σg, the sums in float64 chains and e^y
// with Exp32.
func SoftmaxGrad(d, g, y []float32, log bool) {
	g, y = g[:len(d)], y[:len(d)]
	if log {
		ExpSubTo(d, y, 0)
		LogSoftmaxGradOut(d, g, float32(SumF64(g))) // softmax.go
		return
	}
	SoftmaxGradOut(d, y, g, float32(DotF64(g, y)))
}

// SoftmaxScaled replaces row by softmax(row·scale) (the product rounded
// to float32 first, as a separate multiply would), with the vector kernels
// for the scaling, the maximum, the exponentials and the normalisation: in
// one call of softmaxScaledAVX2, which fuses them (bit for bit as the
// separate AVX2 calls), where the AVX2 kernels run and the row is a
// multiple of 8 long. The maximum is taken as 0 where it is NaN or ±Inf.
func SoftmaxScaled(row []float32, scale float32) {
	if n := len(row); avx2 && n > 0 && n%8 == 0 {
		softmaxScaledAVX2(&row[0], n, scale)
		return
	}
	Scale(row, scale)
	m := Max(row)
	if m != m || m > 3.4e38 || m < -3.4e38 { // NaN or ±Inf: leave it to exp
		m = 0
	}
	Scale(row, 1/ExpSub(row, m))
}

// SoftmaxGradScaled replaces drow, the gradient of a row of probabilities
// prow, by the gradient of the row's scores: prow⊙(drow − drow·prow)·scale,
// with the dot product summed in float64 chains and the products in the
// vector kernels where they run (in one call of softmaxGradRowAVX2, bit
// for bit as the separate AVX2 calls, where the row is a multiple of 8
// long).
func SoftmaxGradScaled(drow, prow []float32, scale float32) {
	if n := len(drow); avx2 && n > 0 && n%8 == 0 {
		softmaxGradRowAVX2(&drow[0], &prow[0], n, scale)
		return
	}
	SoftmaxGradOut(drow, prow, drow, float32(DotF64(drow, prow)))
	Scale(drow, scale)
}
