//go:build amd64 && !purego

package tensor

// geluAsm says whether the GELU kernels run the AVX2+FMA assembly of
// cpu_fast_amd64.s; tests switch it off to exercise the Go code.
var geluAsm = hasAVX2FMA()

// geluAVX2 writes x·Φ(x) for n elements, n a multiple of 8.
//
//go:noescape
func geluAVX2(dst, x *float32, n int)

// geluGradAVX2 writes g·(Φ(x) + x·φ(x)) for n elements, n a multiple of 8.
//
//go:noescape
func geluGradAVX2(dst, gr, x *float32, n int)

func cpuidFast(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

func xgetbvFast() (eax, edx uint32)

// hasAVX2FMA reports whether the CPU has AVX2 and FMA and the OS saves the
// YMM registers.
func hasAVX2FMA() bool {
	if maxLeaf, _, _, _ := cpuidFast(0, 0); maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuidFast(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if xcr0, _ := xgetbvFast(); xcr0&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuidFast(7, 0)
	return ebx7&(1<<5) != 0
}

// expSubAVX2 replaces x[i] by e^(x[i]−m) for n elements, n a multiple of 8,
// and returns their sum.
//
//go:noescape
func expSubAVX2(x *float32, n int, m float32) (sum float32)

// adamwAVX2 is cpuBackend.AdamW's loop for n elements, n a multiple of 8.
//
//go:noescape
func adamwAVX2(p, gr, m, v *float32, n int, c *adamwConsts)
