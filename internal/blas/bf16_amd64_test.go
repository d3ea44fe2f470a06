//go:build amd64 && !purego

package blas

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/testseed"
)

// TestBF16KernelsMatchTwins checks the kernels of bf16_amd64.s against
// their Go twins: dpbf16Kernel12x32 within 2⁻²² of Σ|a·b| per element (the
// twin adds each pair in turn; the hardware may fuse a pair's two
// products), dot4BF16AVX2 likewise (sixteen lanes against one chain).
func TestBF16KernelsMatchTwins(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 9))
	h := func() uint16 { return toBF16(float32(r.NormFloat64())) }
	if cpu.Detected >= cpu.AVX512BF16 {
		for _, kp := range []int{0, 1, 3, 128} {
			for _, rowsLayout := range []bool{false, true} {
				// A in groups of 12 words (rs 4, gs 48) or in 12 rows of
				// kp+1 words (rs 4·(kp+1), gs 4)
				rs, gs := 4, 48
				a := make([]uint32, dpMR*(kp+1))
				word := func(i, q int) *uint32 { return &a[q*dpMR+i] }
				if rowsLayout {
					rs, gs = 4*(kp+1), 4
					word = func(i, q int) *uint32 { return &a[i*(kp+1)+q] }
				}
				b := make([]uint32, dpNR*kp)
				for i := range dpMR {
					for q := range kp {
						*word(i, q) = pair16(h(), h())
					}
				}
				for i := range b {
					b[i] = pair16(h(), h())
				}
				// a tile of a C with rows 40 apart, written then added to
				const ldc = 40
				got, want := make([]float32, 11*ldc+dpNR), make([]float32, 11*ldc+dpNR)
				for i := range got {
					got[i] = float32(math.NaN()) // overwritten, not added to
				}
				var bp *uint32
				if kp > 0 {
					bp = &b[0]
				}
				ap := (*uint16)(unsafe.Pointer(&a[0]))
				// written then added to, prefetching C in one of the two
				// by turns (the prefetch must not change the tile)
				pf := kp % 2 * dpPrefetch
				dpbf16Kernel12x32(kp, ap, rs, gs, bp, &got[0], ldc, pf)
				dpbf16Kernel12x32(kp, ap, rs, gs, bp, &got[0], ldc, dpAdd|(dpPrefetch^pf))
				dpbf16Go(kp, ap, rs, gs, b, want, ldc, false)
				dpbf16Go(kp, ap, rs, gs, b, want, ldc, true)
				for i := range dpMR {
					for j := range dpNR {
						var mag float64
						for q := range kp {
							wa, wb := *word(i, q), b[q*dpNR+j]
							mag += math.Abs(float64(bf16(uint16(wa))*bf16(uint16(wb)))) + math.Abs(float64(bf16(uint16(wa>>16))*bf16(uint16(wb>>16))))
						}
						if g, w := got[i*ldc+j], want[i*ldc+j]; !(math.Abs(float64(g-w)) <= 2*mag*0x1p-22) {
							t.Fatalf("kp=%d rows layout %v: tile[%d][%d] = %v, Go twin %v", kp, rowsLayout, i, j, g, w)
						}
					}
				}
			}
		}
	} else {
		t.Logf("dpbf16Kernel12x32 not run: this machine runs at most %v", cpu.Detected)
	}
	if cpu.Detected < cpu.AVX2 {
		t.Skipf("no AVX2 on this machine (%v)", cpu.Detected)
	}
	for _, k16 := range []int{1, 2, 36} {
		k := 16 * k16
		ldw := k + 3
		x, w := make([]float32, k), make([]uint16, 3*ldw+k)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		for i := range w {
			w[i] = h()
		}
		xe, xo := make([]float32, k/2), make([]float32, k/2)
		for j := range xe {
			xe[j], xo[j] = x[2*j], x[2*j+1]
		}
		var got, want [4]float32
		dot4BF16AVX2(k16, &xe[0], &xo[0], &w[0], ldw, &got)
		dot4BF16Go(xe, xo, w, ldw, &want)
		for rr := range 4 {
			var mag float64
			for p := range x {
				mag += math.Abs(float64(x[p] * bf16(w[rr*ldw+p])))
			}
			if !(math.Abs(float64(got[rr]-want[rr])) <= mag*0x1p-22) {
				t.Fatalf("k16=%d: row %d = %v, Go twin %v", k16, rr, got[rr], want[rr])
			}
		}
	}
}

// BenchmarkDPBF16Kernel times the VDPBF16PS micro-kernel on one 12×32
// tile with its panels in L1 (kp = 128 pairs, A in groups): the rate the
// packing and blocking around it can at best reach, for the fraction of
// the bf16 peak in docs/benchmarks.md. Timings only.
func BenchmarkDPBF16Kernel(b *testing.B) {
	if !dpbf16Asm {
		b.Skip("no AVX512_BF16")
	}
	const kp = 128
	a, bp := make([]uint32, dpMR*kp), make([]uint32, dpNR*kp)
	for i := range a {
		a[i] = pair16(0x3F80, 0x3F80)
	}
	for i := range bp {
		bp[i] = pair16(0x3F80, 0x3F80)
	}
	c := make([]float32, dpMR*dpNR)
	for b.Loop() {
		dpbf16Kernel12x32(kp, (*uint16)(unsafe.Pointer(&a[0])), 4, 48, &bp[0], &c[0], dpNR, 1)
	}
	b.ReportMetric(2*dpMR*dpNR*2*kp*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
