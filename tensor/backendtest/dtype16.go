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
