package blas

import (
	"fmt"
	"math"
	"testing"
)

// TestWiden16Paths checks widen16 on each path this machine runs (AVX-512,
// AVX2, Go) against the exact widening, bit for bit: all 2¹⁶ bfloat16
// patterns (NaNs with their payloads, ±0, subnormals, ±Inf), and lengths
// and offsets around the kernels' steps of 64 and 32 with the elements
// past the end untouched.
func TestWiden16Paths(t *testing.T) {
	defer func(a, b bool) { widenAsm512, widenAsm2 = a, b }(widenAsm512, widenAsm2)
	type path struct {
		name     string
		w512, w2 bool
	}
	ps := []path{{"go", false, false}}
	if widenAsm2 {
		ps = append(ps, path{"avx2", false, true})
	}
	if widenAsm512 {
		ps = append(ps, path{"avx512", true, true})
	}
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	for _, p := range ps {
		widenAsm512, widenAsm2 = p.w512, p.w2
		dst := make([]float32, len(all))
		widen16(dst, all)
		for i, v := range dst {
			if want := uint32(i) << 16; math.Float32bits(v) != want {
				t.Fatalf("%s: widen16 of %#04x = %#08x, want %#08x", p.name, i, math.Float32bits(v), want)
			}
		}
		for _, n := range []int{0, 1, 31, 32, 33, 63, 64, 65, 127, 128, 200} {
			for _, off := range []int{0, 1, 7} {
				what := fmt.Sprintf("%s n=%d off=%d", p.name, n, off)
				src := all[40000+off : 40000+off+n]
				d := make([]float32, n+off+3)
				for i := range d {
					d[i] = -1
				}
				widen16(d[off:off+n], src)
				for i, v := range d {
					want := float32(-1)
					if i >= off && i < off+n {
						want = math.Float32frombits(uint32(src[i-off]) << 16)
					}
					if math.Float32bits(v) != math.Float32bits(want) {
						t.Fatalf("%s: element %d = %v, want %v", what, i, v, want)
					}
				}
			}
		}
	}
}
