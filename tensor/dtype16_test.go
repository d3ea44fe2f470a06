package tensor

import (
	"bytes"
	"crypto/sha256"
	le "encoding/binary"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/autograd"
)

// castGolden is testdata/dtype/casts.bin (scripts/gen_golden_dtype.py):
// PyTorch 1.13's casts between float32 and the 16-bit dtypes.
type castGolden struct {
	widenBF16, widenF16 [32]byte // sha256 of the 2^16 float32 results
	in                  []uint32 // float32 bit patterns
	bf16, f16           []uint16 // their casts
}

func readCastGolden(t *testing.T) castGolden {
	t.Helper()
	raw, err := os.ReadFile("../testdata/dtype/casts.bin")
	if err != nil {
		t.Fatalf("reading the cast goldens (regenerate with /usr/bin/python3 scripts/gen_golden_dtype.py): %v", err)
	}
	if !bytes.HasPrefix(raw, []byte("WICKDT01")) || len(raw) < 8+64+4 {
		t.Fatal("testdata/dtype/casts.bin: not a cast golden file")
	}
	var g castGolden
	copy(g.widenBF16[:], raw[8:40])
	copy(g.widenF16[:], raw[40:72])
	n := int(le.LittleEndian.Uint32(raw[72:76]))
	rest := raw[76:]
	if len(rest) != n*8 {
		t.Fatalf("testdata/dtype/casts.bin: %d bytes for %d cases, want %d", len(rest), n, n*8)
	}
	g.in, g.bf16, g.f16 = make([]uint32, n), make([]uint16, n), make([]uint16, n)
	for i := range n {
		g.in[i] = le.LittleEndian.Uint32(rest[4*i:])
		g.bf16[i] = le.LittleEndian.Uint16(rest[4*n+2*i:])
		g.f16[i] = le.LittleEndian.Uint16(rest[6*n+2*i:])
	}
	return g
}

// TestCastGoldenWiden checks bfloat16 → float32 and float16 → float32 over
// all 2^16 bit patterns against PyTorch's (NaN payloads included), through
// tensors of each dtype (their host copies and ToDType) as well as the
// scalar functions.
func TestCastGoldenWiden(t *testing.T) {
	g := readCastGolden(t)
	for _, c := range []struct {
		dt   DType
		want [32]byte
	}{{BFloat16, g.widenBF16}, {Float16, g.widenF16}} {
		src := &cpuStorage{dt: c.dt, h: make([]uint16, 1<<16)}
		for i := range src.h {
			src.h[i] = uint16(i)
		}
		x := newTensor(cpu, src, contiguousLayout([]int{1 << 16}))
		var viaTensor, viaScalar, viaCast bytes.Buffer
		for i, v := range x.Float32s() {
			le.Write(&viaTensor, le.LittleEndian, math.Float32bits(v))
			le.Write(&viaScalar, le.LittleEndian, math.Float32bits(halfOf(c.dt).to(uint16(i))))
		}
		for _, v := range x.ToDType(Float32).Float32s() {
			le.Write(&viaCast, le.LittleEndian, math.Float32bits(v))
		}
		if sha256.Sum256(viaCast.Bytes()) != c.want {
			t.Errorf("%s → float32 (ToDType) of all bit patterns differs from PyTorch's", c.dt)
		}
		if sha256.Sum256(viaTensor.Bytes()) != c.want {
			t.Errorf("%s → float32 of all bit patterns differs from PyTorch's", c.dt)
		}
		if sha256.Sum256(viaScalar.Bytes()) != c.want {
			t.Errorf("%s → float32 (scalar) differs from PyTorch's", c.dt)
		}
	}
}

// TestCastGoldenNarrow checks float32 → bfloat16 and float32 → float16
// against PyTorch's on random bit patterns, random values and the hard
// cases (ties, NaN payloads, ±0, subnormals, overflow), bit for bit,
// through ToDType and the scalar functions.
func TestCastGoldenNarrow(t *testing.T) {
	g := readCastGolden(t)
	in := make([]float32, len(g.in))
	for i, b := range g.in {
		in[i] = math.Float32frombits(b)
	}
	x := New(in, len(in))
	for _, c := range []struct {
		dt   DType
		want []uint16
	}{{BFloat16, g.bf16}, {Float16, g.f16}} {
		y := x.ToDType(c.dt)
		if y.DType() != c.dt {
			t.Fatalf("ToDType(%s).DType() = %s", c.dt, y.DType())
		}
		got := y.storage.(*cpuStorage).h
		bad := 0
		for i := range in {
			s := halfOf(c.dt).from(in[i])
			if got[i] != c.want[i] || s != c.want[i] {
				if bad++; bad <= 10 {
					t.Errorf("%s(%#08x = %g) = %#04x (scalar %#04x), PyTorch %#04x", c.dt, g.in[i], in[i], got[i], s, c.want[i])
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d casts differ from PyTorch's", c.dt, bad, len(in))
		}
	}
}

// TestCastRoundTrip checks that every 16-bit value survives the round trip
// through float32 (NaNs stay NaN) and that a strided view casts as its
// contiguous copy does.
func TestCastRoundTrip(t *testing.T) {
	for _, dt := range []DType{BFloat16, Float16} {
		h := halfOf(dt)
		for i := range 1 << 16 {
			f := h.to(uint16(i))
			back := h.from(f)
			if f == f && back != uint16(i) {
				t.Fatalf("%s %#04x → %g → %#04x", dt, i, f, back)
			}
			if f != f && h.to(back) == h.to(back) {
				t.Fatalf("%s NaN %#04x came back as %#04x, not a NaN", dt, i, back)
			}
		}
		x := Arange(0, 24, 1).Reshape(2, 3, 4).MulScalar(1.0 / 3)
		v := x.Permute(2, 0, 1).Narrow(0, 1, 2)
		a, b := v.ToDType(dt).Float32s(), v.Contiguous().ToDType(dt).Float32s()
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s cast of a permuted view differs at %d: %v and %v", dt, i, a[i], b[i])
			}
		}
		// views, copies, Item, At, DType and Int64 conversions on the 16-bit tensor
		y := x.ToDType(dt)
		if got, want := y.Transpose(0, 2).Contiguous().Float32s(), x.Transpose(0, 2).ToDType(dt).Float32s(); !equalF32(got, want) {
			t.Fatalf("%s: Transpose.Contiguous = %v, want %v", dt, got, want)
		}
		if y.Clone().DType() != dt || y.Select(0, 1).DType() != dt {
			t.Fatalf("%s: Clone or Select changed the dtype", dt)
		}
		if got := y.At(1, 2, 3); got != h.to(h.from(23.0/3)) {
			t.Fatalf("%s: At = %v", dt, got)
		}
		if got := y.Narrow(0, 1, 1).Narrow(1, 0, 1).Narrow(2, 3, 1).Item(); got != h.to(h.from(15.0/3)) {
			t.Fatalf("%s: Item = %v", dt, got)
		}
		if got := y.ToDType(Int64).Ints()[23]; got != 7 {
			t.Fatalf("%s → int64 of 23/3 = %d, want 7", dt, got)
		}
		if got := FromInts([]int{257, -3}, 2).ToDType(dt).Float32s(); got[1] != -3 || got[0] != h.to(h.from(257)) {
			t.Fatalf("int64 → %s = %v", dt, got)
		}
		z := ZerosLike(y)
		z.CopyFrom(y)
		if z.DType() != dt || !equalF32(z.Float32s(), y.Float32s()) {
			t.Fatalf("%s: CopyFrom into ZerosLike differs", dt)
		}
		z.Fill_(0.1)
		if got := z.Float32s()[0]; got != h.to(h.from(0.1)) {
			t.Fatalf("%s: Fill_(0.1) = %v", dt, got)
		}
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestCastGrad checks that the cast is differentiable between float
// dtypes: the gradient comes back cast to the input's dtype, and through
// a bfloat16 round trip a float32 leaf gets the float32 gradient.
func TestCastGrad(t *testing.T) {
	for _, dt := range []DType{BFloat16, Float16} {
		x := New([]float32{1, 2.5, -3}, 3).RequiresGrad()
		y := x.ToDType(dt)
		if y.GradFn() == nil {
			t.Fatalf("%s: the cast is not recorded", dt)
		}
		w := New([]float32{0.1, 1, 1000}, 3)
		y.Float().Mul(w).Sum().Backward()
		want := New([]float32{0.1, 1, 1000}, 3).ToDType(dt).Float().Float32s()
		if got := x.Grad(); got.DType() != Float32 || !equalF32(got.Float32s(), want) {
			t.Fatalf("%s: grad %v (%s), want %v (the gradient rounded to %s and back)", dt, got.Float32s(), got.DType(), want, dt)
		}
		if x.Long().ToDType(dt).GradFn() != nil {
			t.Fatalf("%s: a cast from int64 was recorded", dt)
		}
		autograd.NoGrad(func() {
			if x.ToDType(dt).GradFn() != nil {
				t.Fatalf("%s: a cast under NoGrad was recorded", dt)
			}
		})
	}
}

// TestDType16String checks the repr against PyTorch's:
// torch.tensor([1.5, -2., 0.1]).bfloat16() prints
// tensor([ 1.5000, -2.0000,  0.1001], dtype=torch.bfloat16).
func TestDType16String(t *testing.T) {
	x := New([]float32{1.5, -2, 0.1}, 3)
	for _, c := range []struct {
		y    *Tensor
		want string
	}{
		{x.BFloat16(), "tensor([ 1.5000, -2.0000,  0.1001], dtype=torch.bfloat16)"},
		{x.Half(), "tensor([ 1.5000, -2.0000,  0.1000], dtype=torch.float16)"},
		{x.RequiresGrad().BFloat16(), "tensor([ 1.5000, -2.0000,  0.1001], dtype=torch.bfloat16, grad_fn=<ToDTypeBackward0>)"},
	} {
		if got := c.y.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// TestDType16Unsupported checks that mixing dtypes, and the ops without
// 16-bit kernels yet (the fused optimizer and attention kernels,
// sampling), panic with an *Error naming the dtype, not with an index out
// of range.
func TestDType16Unsupported(t *testing.T) {
	x := New([]float32{1, 2, 3, 4}, 2, 2)
	for _, dt := range []DType{BFloat16, Float16} {
		y := x.ToDType(dt)
		for name, f := range map[string]func(){
			"Mixed":        func() { y.Add(x) },
			"WhereMixed":   func() { Where(x.Gt(x), y, x) },
			"Multinomial":  func() { Multinomial(y) },
			"AttentionQKV": func() { AttentionQKV(Ones(1, 2, 6).ToDType(dt), 1, true) },
			"AdamWUpdate":  func() { AdamWUpdate(y, y, y, y, AdamWStep{LR: 1, Step: 1}) },
		} {
			err := Catch(f)
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Error(), dt.String()) {
				t.Errorf("%s on %s: error %v, want a *tensor.Error naming %s", name, dt, err, dt)
			}
		}
	}
	var e *Error
	if err := Catch(func() { x.ToDType(DType(42)) }); !errors.As(err, &e) {
		t.Errorf("ToDType(DType(42)): error %v, want a *tensor.Error", err)
	}
}

// TestBits16 checks FromBits16 and Bits16: bit patterns in and out
// unchanged (a NaN payload included), through a transposed view, and the
// misuse that panics.
func TestBits16(t *testing.T) {
	bits := []uint16{0x3F80, 0x7FA1, 0xC000, 0x0001, 0x8000, 0x7F80}
	for _, dt := range []DType{BFloat16, Float16} {
		x := FromBits16(dt, bits, 2, 3)
		if x.DType() != dt || x.Device() != CPU {
			t.Fatalf("FromBits16(%s) is %s on %s", dt, x.DType(), x.Device())
		}
		if got := x.Bits16(); !slices.Equal(got, bits) {
			t.Fatalf("%s: Bits16 = %#04x, want %#04x", dt, got, bits)
		}
		if got, want := x.T().Bits16(), []uint16{0x3F80, 0x0001, 0x7FA1, 0x8000, 0xC000, 0x7F80}; !slices.Equal(got, want) {
			t.Fatalf("%s: Bits16 of the transpose = %#04x, want %#04x", dt, got, want)
		}
		if got := x.Float32s()[0]; got != halfOf(dt).to(0x3F80) {
			t.Fatalf("%s: Float32s()[0] = %v", dt, got)
		}
	}
	var e *Error
	for name, f := range map[string]func(){
		"dtype": func() { FromBits16(Float32, bits) },
		"shape": func() { FromBits16(BFloat16, bits, 4) },
		"out":   func() { New([]float32{1}, 1).Bits16() },
	} {
		if err := Catch(f); !errors.As(err, &e) {
			t.Errorf("%s: error %v, want a *tensor.Error", name, err)
		}
	}
}

// TestHostBits16 checks that HostBits16 shares a 16-bit tensor's storage
// (a view's elements at its offset), and refuses float32 and strided
// tensors by name.
func TestHostBits16(t *testing.T) {
	bits := []uint16{0x3F80, 0x7FA1, 0xC000, 0x0001, 0x8000, 0x7F80}
	for _, dt := range []DType{BFloat16, Float16} {
		x := FromBits16(dt, bits, 2, 3)
		h := x.Slice(0, 1, 2).HostBits16()
		if !slices.Equal(h, bits[3:]) || cap(h) != 3 {
			t.Fatalf("%s: HostBits16 of row 1 = %#04x (cap %d), want %#04x", dt, h, cap(h), bits[3:])
		}
		h[0] = 0x4000
		if got := x.Bits16()[3]; got != 0x4000 {
			t.Fatalf("%s: a write through HostBits16 left %#04x in the tensor", dt, got)
		}
		for name, f := range map[string]func(){
			"float32": func() { New([]float32{1}, 1).HostBits16() },
			"strided": func() { x.T().HostBits16() },
		} {
			if err := Catch(f); err == nil || !strings.Contains(err.Error(), "HostBits16") {
				t.Errorf("%s %s: error %v, want a panic naming HostBits16", dt, name, err)
			}
		}
	}
}

// TestDType16Elementwise checks the elementwise ops on BFloat16 and
// Float16 tensors against PyTorch's rule for them on the CPU: compute in
// float32, round the result once. Inputs are strided and broadcast views;
// comparisons give float32 1 or 0; a derivative through Mul and a unary op
// comes back in the input's dtype.
func TestDType16Elementwise(t *testing.T) {
	r := NewGenerator(7)
	a32 := r.Randn(3, 4, 5)
	b32 := r.Randn(5, 4).Abs().AddScalar(0.5) // positive: Pow and Log stay real
	for _, dt := range []DType{BFloat16, Float16} {
		h := halfOf(dt)
		a := a32.ToDType(dt).Permute(0, 2, 1) // [3 5 4], strided
		b := b32.ToDType(dt)                  // [5 4], broadcast
		av, bv := a.Float32s(), b.Float32s()
		for _, op := range BinaryOps() {
			out := binary(op, a, b, nil)
			wantDT := dt
			if op.IsComparison() {
				wantDT = Float32
			}
			if out.DType() != wantDT {
				t.Fatalf("%s on %s gives %s, want %s", op, dt, out.DType(), wantDT)
			}
			got := out.Float32s()
			for i := range got {
				x, y := av[i], bv[i%20]
				var w float32
				if op.IsComparison() {
					w = b2f(binaryOps[op].cmp(compare3(x, y)))
				} else {
					w = h.to(h.from(binaryOps[op].fwd(x, y)))
				}
				if math.Float32bits(got[i]) != math.Float32bits(w) {
					t.Fatalf("%s %s(%v, %v) = %v, want %v", dt, op, x, y, got[i], w)
				}
			}
		}
		for op := range UnaryOp(len(unaryOps)) {
			p := UnaryParams{A: 0.5, B: 1.5}
			got := a.unary(op, p)
			if got.DType() != dt {
				t.Fatalf("%s on %s gives %s", op, dt, got.DType())
			}
			for i, v := range got.Float32s() {
				w := h.to(h.from(unaryOps[op].fwd(av[i], p)))
				if math.Float32bits(v) != math.Float32bits(w) && !(v != v && w != w) {
					t.Fatalf("%s %s(%v) = %v, want %v", dt, op, av[i], v, w)
				}
			}
		}
		// a derivative in the 16-bit dtype, cast back to the float32 leaf
		x := New([]float32{0.3, -1.2, 2}, 3).RequiresGrad()
		xh := x.ToDType(dt)
		xh.Mul(xh).Tanh().Float().Sum().Backward()
		xs := xh.Float32s()
		for i, g := range x.Grad().Float32s() {
			// y = tanh(x²) in dt; dy/d(x²) = (1 − y²) rounded to dt, then
			// Mul's gradient g·x twice (fan-out), each rounded to dt
			sq := h.to(h.from(xs[i] * xs[i]))
			y := h.to(h.from(float32(math.Tanh(float64(sq)))))
			d := h.to(h.from(unaryOps[OpTanh].grad(1, sq, y, UnaryParams{})))
			gx := h.to(h.from(d * xs[i]))
			w := h.to(h.from(gx + gx))
			if g != w {
				t.Errorf("%s: grad[%d] = %v, want %v", dt, i, g, w)
			}
		}
	}
}
