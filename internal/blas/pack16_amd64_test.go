//go:build amd64 && !purego

package blas

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/internal/testseed"
)

// TestPack16KernelsMatchTwins checks the kernels of pack16_amd64.s against
// their Go twins bit for bit: round16AVX512 on every bfloat16 pattern with
// low halves around the rounding's edges (ties, one off, NaNs, subnormals)
// and on tails of every length below 16, interleave and gather on lane
// counts from 1 to 32 with both store widths, and the transposes of 32
// rows against the gather.
func TestPack16KernelsMatchTwins(t *testing.T) {
	if !pack16Asm {
		t.Skip("no AVX-512 on this machine")
	}
	var src []float32
	for hi := range 1 << 16 {
		for _, lo := range []uint32{0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF} {
			src = append(src, math.Float32frombits(uint32(hi)<<16|lo))
		}
	}
	for n := range 17 {
		for _, s := range [][]float32{src, src[3:]} {
			s = s[:len(s)-n]
			got, want := make([]uint16, len(s)+1), make([]uint16, len(s)+1)
			got[len(s)], want[len(s)] = 0xABCD, 0xABCD // not written
			round16AVX512(&got[0], 0, &s[0], 0, 1, len(s))
			round16Go(&want[0], 0, &s[0], 0, 1, len(s))
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("round16AVX512 (n %d): element %d (%#x) = %#x, twin %#x", len(s), i, math.Float32bits(s[min(i, len(s)-1)]), got[i], want[i])
				}
			}
		}
	}
	// rows of every length below 40, strided
	for n := range 40 {
		const rows, sld, dld = 3, 41, 43
		got, want := make([]uint16, rows*dld), make([]uint16, rows*dld)
		for i := range got {
			got[i], want[i] = 0xABCD, 0xABCD
		}
		round16AVX512(&got[0], 2*dld, &src[100], 4*sld, rows, n)
		round16Go(&want[0], 2*dld, &src[100], 4*sld, rows, n)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("round16AVX512 (%d rows of %d): element %d = %#x, twin %#x", rows, n, i, got[i], want[i])
			}
		}
	}
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 11))
	const kp, ld = 5, 40
	f := make([]float32, 2*kp*ld)
	h := make([]uint16, 2*kp*ld)
	for i := range f {
		f[i] = float32(r.NormFloat64())
		h[i] = uint16(r.Uint32())
	}
	var offs [32]int32
	for j := range offs {
		offs[j] = int32(2 * j * (2 * kp))
	}
	for _, width := range []int{12, 32} {
		store := laneMask(width)
		for lanes := 1; lanes <= width; lanes++ {
			lm := laneMask(lanes)
			check := func(name string, run func(dst []uint32), twin func(dst []uint32)) {
				got, want := make([]uint32, kp*width+1), make([]uint32, kp*width+1)
				for i := range got {
					got[i], want[i] = 0xDEADBEEF, 0xDEADBEEF
				}
				run(got)
				twin(want)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s (width %d, lanes %d): word %d = %#x, twin %#x", name, width, lanes, i, got[i], want[i])
					}
				}
			}
			check("interleaveF16AVX512", func(d []uint32) { interleaveF16AVX512(&d[0], 4*width, &f[0], 4*ld, kp, lm, store) },
				func(d []uint32) { interleaveF16Go(&d[0], 4*width, &f[0], 4*ld, kp, lm, store) })
			check("interleaveH16AVX512", func(d []uint32) { interleaveH16AVX512(&d[0], 4*width, &h[0], 2*ld, kp, lm, store) },
				func(d []uint32) { interleaveH16Go(&d[0], 4*width, &h[0], 2*ld, kp, lm, store) })
			if width == dpNR {
				check("gatherPairsAVX512", func(d []uint32) { gatherPairsAVX512(&d[0], 4*width, &h[0], &offs, kp, lm, store) },
					func(d []uint32) { gatherPairsGo(&d[0], 4*width, &h[0], &offs, kp, lm, store) })
			}
		}
	}
	// the transposes of 32 rows, against the gather of all 32 lanes:
	// 1–3 blocks of 16 pairs, rows just long enough and padded, groups
	// spaced 32 words and wider (the words between not written)
	for blocks := 1; blocks <= 3; blocks++ {
		for _, ld := range []int{32 * blocks, 32*blocks + 2, 32*blocks + 37} {
			for _, gs := range []int{4 * dpNR, 4*dpNR + 12} {
				h := make([]uint16, dpNR*ld)
				for i := range h {
					h[i] = uint16(r.Uint32())
				}
				var offs [32]int32
				for j := range offs {
					offs[j] = int32(2 * j * ld)
				}
				n := (16*blocks-1)*gs/4 + dpNR + 1
				got, want := make([]uint32, n), make([]uint32, n)
				for i := range got {
					got[i], want[i] = 0xDEADBEEF, 0xDEADBEEF
				}
				transposePairsAVX512(&got[0], gs, &h[0], 2*ld, blocks)
				gatherPairsGo(&want[0], gs, &h[0], &offs, 16*blocks, laneMask(dpNR), laneMask(dpNR))
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("transposePairsAVX512 (%d blocks, ld %d, gs %d): word %d = %#x, gather %#x", blocks, ld, gs, i, got[i], want[i])
					}
				}
				for i := range got {
					got[i] = 0xDEADBEEF
				}
				transposePairsGo(&got[0], gs, &h[0], 2*ld, blocks)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("transposePairsGo (%d blocks, ld %d, gs %d): word %d = %#x, gather %#x", blocks, ld, gs, i, got[i], want[i])
					}
				}
			}
		}
	}
}
