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

// TestAMXKernelMatchesTwin checks amxKernel32x32 against amxTileGo where
// the tiles run (WICK_CPU=amx on a processor with AMX-BF16), on a block of
// a C with padded rows, written then added to, over one and several tiles'
// depths: within 2⁻²² of Σ|a·b| per element, twice (TDPBF16PS may fuse a
// pair's products and round its sum once). Elsewhere the AMX path's
// packing and blocking run on the twin in TestGemmBF16 and
// TestGemmBF16Round.
func TestAMXKernelMatchesTwin(t *testing.T) {
	if !cpu.HasAMXBF16 {
		t.Skipf("the AMX tiles do not run here (%v, WICK_CPU=amx opts in where the processor has them)", cpu.Use)
	}
	r := rand.New(rand.NewPCG(testseed.Seed(t, 1), 11))
	h := func() uint16 { return toBF16(float32(r.NormFloat64())) }
	for _, kq := range []int{1, 3, 24} {
		kp := 16 * kq
		rs := 4 * (kp + 16) // rows of A padded past their pairs
		a := make([]uint32, amxMR*rs/4)
		b := make([]uint32, kp*dpNR)
		for i := range amxMR {
			for q := range kp {
				a[i*rs/4+q] = pair16(h(), h())
			}
		}
		for i := range b {
			b[i] = pair16(h(), h())
		}
		const ldc = 40
		got, want := make([]float32, (amxMR-1)*ldc+dpNR), make([]float32, (amxMR-1)*ldc+dpNR)
		for i := range got {
			got[i] = float32(math.NaN()) // overwritten, not added to
		}
		ap := (*uint16)(unsafe.Pointer(&a[0]))
		amxKernel32x32(kq, ap, rs, &b[0], &got[0], ldc, 0, &amxConfig)
		amxKernel32x32(kq, ap, rs, &b[0], &got[0], ldc, 1, &amxConfig)
		amxTileGo(kq, ap, rs, &b[0], &want[0], ldc, 0, &amxConfig)
		amxTileGo(kq, ap, rs, &b[0], &want[0], ldc, 1, &amxConfig)
		for i := range amxMR {
			for j := range dpNR {
				var mag float64
				for q := range kp {
					wa, wb := a[i*rs/4+q], b[q*dpNR+j]
					mag += math.Abs(float64(bf16(uint16(wa))*bf16(uint16(wb)))) + math.Abs(float64(bf16(uint16(wa>>16))*bf16(uint16(wb>>16))))
				}
				if g, w := got[i*ldc+j], want[i*ldc+j]; !(math.Abs(float64(g-w)) <= 2*mag*0x1p-22) {
					t.Fatalf("kq=%d: C[%d][%d] = %v, Go twin %v", kq, i, j, g, w)
				}
			}
		}
	}
}

// BenchmarkAMXKernel times amxKernel32x32 on one 32×32 block with its
// operands in L1 and L2 (384 pairs, GPT-2's 768 depths) where the tiles
// run: the rate the AMX path's packing and blocking can at best reach.
// Timings only.
func BenchmarkAMXKernel(b *testing.B) {
	if !cpu.HasAMXBF16 {
		b.Skipf("the AMX tiles do not run here (%v)", cpu.Use)
	}
	const kq = 24
	a := make([]uint32, amxMR*16*kq)
	w := make([]uint32, 16*kq*dpNR)
	for i := range a {
		a[i] = 0x3F803F80
	}
	for i := range w {
		w[i] = 0x3F803F80
	}
	c := make([]float32, amxMR*dpNR)
	for b.Loop() {
		amxKernel32x32(kq, (*uint16)(unsafe.Pointer(&a[0])), 4*16*kq, &w[0], &c[0], dpNR, 0, &amxConfig)
	}
	b.ReportMetric(2*amxMR*dpNR*32*kq*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
