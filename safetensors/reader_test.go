package safetensors_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/wickml/wick/safetensors"
)

// TestHalfToFloat32 checks every binary16 value against its definition:
// (−1)^s · 2^(e−15) · (1 + m/1024), subnormals m · 2^−24, e = 31 infinite
// or NaN.
func TestHalfToFloat32(t *testing.T) {
	for h := range 1 << 16 {
		s, e, m := h>>15, h>>10&0x1f, h&0x3ff
		var want float64
		switch {
		case e == 0x1f && m == 0:
			want = math.Inf(1)
		case e == 0x1f:
			want = math.NaN()
		case e == 0:
			want = math.Ldexp(float64(m), -24)
		default:
			want = math.Ldexp(1+float64(m)/1024, e-15)
		}
		if s == 1 {
			want = -want
		}
		got := safetensors.HalfToFloat32(uint16(h))
		if math.IsNaN(want) {
			if !math.IsNaN(float64(got)) {
				t.Errorf("half %#04x: got %v, want NaN", h, got)
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != (s == 1) {
			t.Errorf("half %#04x: got %v, want %v", h, got, want)
		}
	}
}

func TestDecode(t *testing.T) {
	raw := binary.LittleEndian.AppendUint16(nil, 0x3c00) // 1 as F16
	raw = binary.LittleEndian.AppendUint16(raw, 0xc000)  // -2 as F16
	bf := binary.LittleEndian.AppendUint16(nil, 0x3f80)  // 1 as BF16
	bf = binary.LittleEndian.AppendUint16(bf, 0x4049)    // 3.140625 as BF16
	f32 := binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.1))
	dst := make([]float32, 2)
	if safetensors.Decode(dst, raw, "F16"); dst[0] != 1 || dst[1] != -2 {
		t.Errorf("F16: %v", dst)
	}
	if safetensors.Decode(dst, bf, "BF16"); dst[0] != 1 || dst[1] != 3.140625 {
		t.Errorf("BF16: %v", dst)
	}
	if safetensors.Decode(dst[:1], f32, "F32"); dst[0] != 0.1 {
		t.Errorf("F32: %v", dst[0])
	}
}

// TestUsagePanics: misuse panics with a *UsageError naming the function.
func TestUsagePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"NewReaderSize": func() { safetensors.NewReaderSize(0) },
		"Decode":        func() { safetensors.Decode(make([]float32, 1), make([]byte, 8), "I64") },
	} {
		func() {
			defer func() {
				e, ok := recover().(*safetensors.UsageError)
				if !ok || e.Op != name {
					t.Errorf("%s: recovered %v, want a *UsageError of %s", name, e, name)
				}
			}()
			f()
		}()
	}
}
