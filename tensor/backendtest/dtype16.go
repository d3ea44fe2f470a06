package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/tensor"
)

// The 16-bit float dtypes in the suite: a backend that holds them
// implements tensor.Backend16 (their bit patterns to and from the host);
// its casts must give the CPU reference's conversions (tensor/dtype16.go:
// PyTorch's rounding) bit for bit.

// halfDTypes are the 16-bit float dtypes.
var halfDTypes = []tensor.DType{tensor.BFloat16, tensor.Float16}

// halfConv returns the conversions of a 16-bit dtype.
func halfConv(dt tensor.DType) (from func(float32) uint16, to func(uint16) float32) {
	if dt == tensor.BFloat16 {
		return tensor.BF16FromFloat32, tensor.BF16ToFloat32
	}
	return tensor.F16FromFloat32, tensor.F16ToFloat32
}

// backend16 returns b as a tensor.Backend16, or nil (saying so in the log)
// when it holds no 16-bit storages.
func backend16(t testing.TB, b tensor.Backend) tensor.Backend16 {
	b16, ok := b.(tensor.Backend16)
	if !ok {
		t.Logf("%s holds no bfloat16 or float16 storages (no tensor.Backend16): nothing to check", b.Device())
	}
	return b16
}

// checkBits compares 16-bit patterns exactly.
func checkBits(t testing.TB, name string, got, want []uint16) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d elements, want %d", name, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if got[i] != want[i] {
			if bad < 5 {
				t.Errorf("%s: element %d: got %#04x, want %#04x", name, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", name, bad, len(got))
	}
}

// checkFloatBits compares float32s bit for bit (NaN payloads included).
func checkFloatBits(t testing.TB, name string, got, want []float32) {
	t.Helper()
	bad := 0
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			if bad < 5 {
				t.Errorf("%s: element %d: got %#08x, want %#08x", name, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", name, bad, len(got))
	}
}

// castInputs returns float32 values that exercise the rounding to dt:
// every tie between neighbouring 16-bit values (and one unit of float32
// either side), the overflow thresholds, subnormals of both formats, NaNs
// with payloads and signs, ±0, ±Inf, and random values of every exponent.
func castInputs(r *rand.Rand, dt tensor.DType) []float32 {
	_, to := halfConv(dt)
	var xs []float32
	for range 4000 {
		h := uint16(r.Uint32())
		lo := to(h)
		hi := to(h + 1)
		if lo != lo || hi != hi || math.IsInf(float64(lo), 0) || math.IsInf(float64(hi), 0) {
			continue
		}
		mid := float32((float64(lo) + float64(hi)) / 2) // exact: the tie
		xs = append(xs, mid, math.Nextafter32(mid, float32(math.Inf(1))), math.Nextafter32(mid, float32(math.Inf(-1))))
	}
	for range 4000 {
		xs = append(xs, math.Float32frombits(r.Uint32()))
	}
	inf := float32(math.Inf(1))
	xs = append(xs, 0, float32(math.Copysign(0, -1)), inf, -inf,
		math.Float32frombits(0x7FC00000), math.Float32frombits(0xFFC00000), math.Float32frombits(0x7F800001),
		math.Float32frombits(0x7FBFFFFF), math.Float32frombits(0xFFA5A5A5),
		65504, 65519.996, 65520, -65520, 3.3895314e38, 3.3961775e38, math.MaxFloat32, -math.MaxFloat32,
		0x1p-149, -0x1p-149, 0x1p-126, 0x1p-24, 0x1p-25, 0x1.8p-25, 0x1p-26, 6.1035156e-05, 6.097555e-05)
	return xs
}

// testCast16 checks the casts of a backend that holds bfloat16 and
// float16 storages: every one of the 2^16 bit patterns to float32 (exact;
// NaN payloads as the CPU reference keeps them), float32 to 16 bits on
// ties, subnormals, overflow and NaNs (bit for bit), from contiguous and
// strided views; the bit patterns in and out unchanged; int64 and the other
// 16-bit dtype through float32; and Fill.
func testCast16(t testing.TB, b tensor.Backend) {
	b16 := backend16(t, b)
	if b16 == nil {
		return
	}
	r := NewRand(t)
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	for _, dt := range halfDTypes {
		from, to := halfConv(dt)
		// every bit pattern, in and out unchanged, and to float32
		s := b16.FromBits16(dt, all)
		if s.DType() != dt || s.Len() != len(all) {
			t.Fatalf("FromBits16(%s): got a %s storage of %d elements, want %s of %d", dt, s.DType(), s.Len(), dt, len(all))
		}
		checkBits(t, fmt.Sprintf("%s bit patterns in and out", dt), b16.Bits16(s, whole(len(all))), all)
		want := make([]float32, len(all))
		for i, h := range all {
			want[i] = to(h)
		}
		checkFloatBits(t, fmt.Sprintf("%s → float32, all 2^16 patterns", dt), b.Float32s(s, whole(len(all))), want)
		// a strided view of them: every third pattern from 7, to float32
		// and to 16 bits
		sv := tensor.Layout{Shape: []int{(len(all) - 7) / 3}, Strides: []int{3}, Offset: 7}
		wantS := gatherView(want, sv)
		checkFloatBits(t, fmt.Sprintf("%s → float32, strided", dt), b.Float32s(s, sv), wantS)
		checkBits(t, fmt.Sprintf("%s bit patterns of a strided view", dt), b16.Bits16(s, sv), gatherView(all, sv))
		// float32 → 16 bits: contiguous, and from a transposed view
		xs := castInputs(r, dt)
		wantH := make([]uint16, len(xs))
		for i, x := range xs {
			wantH[i] = from(x)
		}
		src := b.FromFloat32s(xs)
		dst := b.Alloc(dt, len(xs))
		b.Copy(dst, whole(len(xs)), src, whole(len(xs)))
		checkBits(t, fmt.Sprintf("float32 → %s", dt), b16.Bits16(dst, whole(len(xs))), wantH)
		rows := len(xs) / 4
		tl := tensor.Layout{Shape: []int{4, rows}, Strides: []int{1, 4}}
		dst = b.Alloc(dt, 4*rows)
		b.Copy(dst, contiguous([]int{4, rows}), src, tl)
		checkBits(t, fmt.Sprintf("float32 → %s, transposed", dt), b16.Bits16(dst, whole(4*rows)), gatherView(wantH, tl))
		// 16 bits into a strided 16-bit view (the patterns, NaNs too)
		dv := tensor.Layout{Shape: []int{100, 50}, Strides: []int{1, 100}, Offset: 3}
		dst = b16.FromBits16(dt, make([]uint16, 5003))
		b.Copy(dst, dv, s, contiguous([]int{100, 50}))
		wantD := make([]uint16, 5003)
		for k, o := range dv.Offsets() {
			wantD[o] = all[k]
		}
		checkBits(t, fmt.Sprintf("%s → %s, into a transposed view", dt, dt), b16.Bits16(dst, whole(5003)), wantD)
		// int64 ↔ 16 bits and 16 bits ↔ the other 16-bit dtype, through
		// float32
		ints := []int64{0, 1, -1, 255, 257, -65505, 65519, 65520, 1 << 40, -(1 << 62) - 12345, math.MaxInt64}
		wantI := make([]uint16, len(ints))
		for i, v := range ints {
			wantI[i] = from(float32(v))
		}
		dst = b.Alloc(dt, len(ints))
		b.Copy(dst, whole(len(ints)), b.FromInt64s(ints), whole(len(ints)))
		checkBits(t, fmt.Sprintf("int64 → %s", dt), b16.Bits16(dst, whole(len(ints))), wantI)
		gotI := b.Int64s(s, whole(len(all)))
		bad := 0
		for i, h := range all {
			if w := tensor.ToInt64(float64(to(h))); gotI[i] != w {
				if bad < 5 {
					t.Errorf("%s → int64: pattern %#04x: got %d, want %d", dt, h, gotI[i], w)
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s → int64: %d of %d patterns differ", dt, bad, len(all))
		}
		other := tensor.Float16
		if dt == tensor.Float16 {
			other = tensor.BFloat16
		}
		ofrom, _ := halfConv(other)
		wantO := make([]uint16, len(all))
		for i, h := range all {
			wantO[i] = ofrom(to(h))
		}
		dst = b.Alloc(other, len(all))
		b.Copy(dst, whole(len(all)), s, whole(len(all)))
		checkBits(t, fmt.Sprintf("%s → %s", dt, other), b16.Bits16(dst, whole(len(all))), wantO)
		// Fill, of a contiguous and of a strided view
		for _, v := range []float64{0, -1.5, 1.0 / 3, 70000, math.NaN(), math.Inf(-1)} {
			dst = b16.FromBits16(dt, make([]uint16, 7))
			b.Fill(dst, tensor.Layout{Shape: []int{3}, Strides: []int{2}, Offset: 1}, v)
			h := from(float32(v))
			checkBits(t, fmt.Sprintf("Fill %s with %v, strided", dt, v), b16.Bits16(dst, whole(7)), []uint16{0, h, 0, h, 0, h, 0})
			b.Fill(dst, whole(7), v)
			checkBits(t, fmt.Sprintf("Fill %s with %v", dt, v), b16.Bits16(dst, whole(7)), []uint16{h, h, h, h, h, h, h})
		}
	}
}

// store16 rounds x to dt and returns a storage of b holding the rounded
// values and the values as float32 (exact).
func store16(b16 tensor.Backend16, dt tensor.DType, x []float32) (tensor.Storage, []float32) {
	from, to := halfConv(dt)
	h, f := make([]uint16, len(x)), make([]float32, len(x))
	for i, v := range x {
		h[i] = from(v)
		f[i] = to(h[i])
	}
	return b16.FromBits16(dt, h), f
}

// poisoned16 returns an n-element storage of the 16-bit dt filled with NaN.
func poisoned16(b tensor.Backend, dt tensor.DType, n int) tensor.Storage {
	s := b.Alloc(dt, n)
	if n > 0 {
		b.Fill(s, whole(n), math.NaN())
	}
	return s
}

// round16Allowed adds to allowed what rounding the wanted values to dt
// once adds: its unit roundoff relative, half its smallest subnormal.
func round16Allowed(dt tensor.DType, want, allowed []float64) {
	ur, tiny := unitRoundoff(dt)
	for i, w := range want {
		allowed[i] += ur*math.Abs(w) + tiny
	}
}

// overflow16 returns want with the values that round to ±Inf in dt
// replaced by ±Inf (a float16 result beyond 65519.99…).
func overflow16(dt tensor.DType, want []float64) {
	from, to := halfConv(dt)
	for i, w := range want {
		if v := to(from(float32(w))); math.IsInf(float64(v), 0) && !math.IsInf(w, 0) && !math.IsNaN(w) {
			want[i] = float64(v)
		}
	}
}

// halve16 halves float16 inputs drawn from the normal domain (σ 3) so
// that Exp stays far below float16's largest value: no result lands near
// the overflow threshold, where a float32 result and the float64
// reference may round to different sides of it.
func halve16(dt tensor.DType, c unaryCase, x []float32) {
	if dt == tensor.Float16 && c.lo == 0 && c.hi == 0 {
		for i := range x {
			x[i] /= 2
		}
	}
}

// testUnary16 runs every unary op on bfloat16 and float16 views
// (contiguous, strided, broadcast) of a backend that holds them: the op of
// the 16-bit values in float32, rounded once to the dtype (PyTorch's
// rule), against the float64 reference of the 16-bit inputs.
func testUnary16(t testing.TB, b tensor.Backend) {
	b16 := backend16(t, b)
	if b16 == nil {
		return
	}
	r := NewRand(t)
	for _, dt := range halfDTypes {
		for _, c := range unaryCases {
			f := unaryRef(c.op, c.p)
			for _, kind := range viewKinds {
				shape := randomShape(r, 4, 7)
				if kind == contig {
					shape = []int{3, 57, 129}
				}
				v := makeView(r, shape, kind)
				name := fmt.Sprintf("%s %v(A=%v,B=%v)/%s/%v", dt, c.op, c.p.A, c.p.B, kindNames[kind], v)
				x := unaryInput(r, v.n, c.lo, c.hi, kind != contig)
				halve16(dt, c, x)
				src, xr := store16(b16, dt, x)
				n := numel(shape)
				dst := poisoned16(b, dt, n)
				b.Unary(c.op, c.p, dst, src, v.l)
				want, allowed := make([]float64, n), make([]float64, n)
				for i, xv := range gatherView(xr, v.l) {
					want[i] = f(float64(xv))
					allowed[i] = elemRel*math.Abs(want[i]) + 1e-8
				}
				round16Allowed(dt, want, allowed)
				overflow16(dt, want)
				checkBound(t, name, read(b, dst), want, allowed)
			}
		}
	}
}

// testUnaryGrad16 is testUnaryGrad on bfloat16 and float16 storages: g,
// x and y = op(x) in the dtype, g·op'(x) computed in float32 and rounded
// once.
func testUnaryGrad16(t testing.TB, b tensor.Backend) {
	b16 := backend16(t, b)
	if b16 == nil {
		return
	}
	r := NewRand(t)
	for _, dt := range halfDTypes {
		from, to := halfConv(dt)
		for _, c := range unaryCases {
			f, df := unaryRef(c.op, c.p), unaryGradRef(c.op, c.p)
			for _, n := range []int{1, 37, 7001} {
				xin := unaryInput(r, n, c.lo, c.hi, true)
				halve16(dt, c, xin)
				xs, x := store16(b16, dt, xin)
				y := make([]float32, n)
				for i, v := range x {
					y[i] = to(from(float32(f(float64(v)))))
				}
				ys, _ := store16(b16, dt, y)
				gs, g := store16(b16, dt, randn(r, n))
				dst := poisoned16(b, dt, n)
				b.UnaryGrad(c.op, c.p, dst, gs, xs, ys, n)
				want, allowed := make([]float64, n), make([]float64, n)
				for i := range x {
					w, scale := df(float64(g[i]), float64(x[i]), float64(y[i]))
					want[i] = w
					allowed[i] = elemRel*math.Abs(w) + 8*u*scale
				}
				round16Allowed(dt, want, allowed)
				overflow16(dt, want)
				checkBound(t, fmt.Sprintf("%s %vGrad(A=%v)/n=%d", dt, c.op, c.p.A, n), read(b, dst), want, allowed)
			}
		}
	}
}

// testBinary16 is testBinary on bfloat16 and float16 operands: the op of
// the 16-bit values in float32 rounded once to the dtype, or a
// comparison's float32 1 or 0 exactly.
func testBinary16(t testing.TB, b tensor.Backend) {
	b16 := backend16(t, b)
	if b16 == nil {
		return
	}
	r := NewRand(t)
	for _, dt := range halfDTypes {
		for _, op := range tensor.BinaryOps() {
			for _, ka := range viewKinds {
				for _, kb := range viewKinds {
					shape := randomShape(r, 5, 6)
					if ka == contig && kb == contig {
						shape = []int{2, 30, 131}
					}
					va, vb := makeView(r, shape, ka), makeView(r, shape, kb)
					var xa, xb []float32
					if op == tensor.OpPow {
						xa, xb = randIn(r, va.n, 0.1, 3), randIn(r, vb.n, -2, 2)
					} else {
						xa, xb = randIn(r, va.n, -3, 3), randIn(r, vb.n, -3, 3)
						for _, x := range [][]float32{xa, xb} {
							for i := range x {
								if r.IntN(3) == 0 {
									x[i] = float32(math.Round(float64(x[i])))
								}
							}
						}
						if va.n > 2 {
							xa[1] = float32(math.NaN())
						}
					}
					sa, ra := store16(b16, dt, xa)
					sb, rb := store16(b16, dt, xb)
					n := numel(shape)
					var dst tensor.Storage
					if op.IsComparison() {
						dst = poisoned(b, tensor.Float32, n)
					} else {
						dst = poisoned16(b, dt, n)
					}
					b.Binary(op, dst, sa, va.l, sb, vb.l)
					f := binaryRef(op)
					ga, gb := gatherView(ra, va.l), gatherView(rb, vb.l)
					want, allowed := make([]float64, n), make([]float64, n)
					for i := range want {
						want[i] = f(ga[i], gb[i])
						allowed[i] = elemRel * math.Abs(want[i])
					}
					if !op.IsComparison() {
						round16Allowed(dt, want, allowed)
					}
					checkBound(t, fmt.Sprintf("%s %v/%s %v/%s %v", dt, op, kindNames[ka], va, kindNames[kb], vb), read(b, dst), want, allowed)
				}
			}
		}
	}
}

// testWhere16 is testWhere on bfloat16 and float16 operands (a float32
// condition): the selected bit patterns, NaNs included.
func testWhere16(t testing.TB, b tensor.Backend) {
	b16 := backend16(t, b)
	if b16 == nil {
		return
	}
	r := NewRand(t)
	for _, dt := range halfDTypes {
		for _, kc := range viewKinds {
			for _, ka := range viewKinds {
				shape := randomShape(r, 4, 6)
				vc, va, vb := makeView(r, shape, kc), makeView(r, shape, ka), makeView(r, shape, viewKinds[r.IntN(len(viewKinds))])
				cond := make([]float32, vc.n)
				for i := range cond {
					if r.IntN(2) == 0 {
						cond[i] = float32(r.IntN(3)) - 1 // -1, 0 or 1
					}
				}
				ha, hb := make([]uint16, va.n), make([]uint16, vb.n)
				for i := range ha {
					ha[i] = uint16(r.Uint32())
				}
				for i := range hb {
					hb[i] = uint16(r.Uint32())
				}
				n := numel(shape)
				dst := poisoned(b, dt, n)
				b.Where(dst, b.FromFloat32s(cond), vc.l, b16.FromBits16(dt, ha), va.l, b16.FromBits16(dt, hb), vb.l)
				gc, ga, gb := gatherView(cond, vc.l), gatherView(ha, va.l), gatherView(hb, vb.l)
				want := make([]uint16, n)
				for i, c := range gc {
					if c != 0 {
						want[i] = ga[i]
					} else {
						want[i] = gb[i]
					}
				}
				checkBits(t, fmt.Sprintf("%s Where/%v/%v/%v", dt, vc, va, vb), b16.Bits16(dst, whole(n)), want)
			}
		}
	}
}
