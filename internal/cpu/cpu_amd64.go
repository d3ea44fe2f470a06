//go:build amd64 && !purego

package cpu

// cpuid executes CPUID with the given leaf and sub-leaf.
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// xgetbv0 reads extended control register 0 (XCR0); only valid when
// CPUID reports OSXSAVE.
func xgetbv0() (eax, edx uint32)

// detects is true: this build asks the processor.
const detects = true

// detect returns the best level that both the processor (CPUID) and the
// operating system (XCR0: which register state it saves on a context
// switch) support.
func detect() Level {
	if maxLeaf, _, _, _ := cpuid(0, 0); maxLeaf < 7 {
		return Generic
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
	)
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return Generic
	}
	xcr0, _ := xgetbv0()
	// XCR0 bit 1: SSE state, bit 2: AVX (upper YMM) state
	if xcr0&6 != 6 {
		return Generic
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx2 = 1 << 5
	if ebx7&avx2 == 0 {
		return Generic
	}
	const (
		avx512f  = 1 << 16
		avx512dq = 1 << 17
		avx512bw = 1 << 30
		avx512vl = 1 << 31
		all512   = avx512f | avx512dq | avx512bw | avx512vl
		// XCR0 bit 5: opmask state, 6: upper halves of ZMM0-15,
		// 7: ZMM16-31
		zmmState = 1<<5 | 1<<6 | 1<<7
	)
	if ebx7&all512 != all512 || xcr0&zmmState != zmmState {
		return AVX2
	}
	// CPUID leaf 7 sub-leaf 1, EAX bit 5: AVX512_BF16 (the sub-leaf
	// exists where leaf 7 sub-leaf 0 reports a maximum sub-leaf ≥ 1 in EAX)
	eax7, _, _, edx7 := cpuid(7, 0)
	if eax7 < 1 {
		return AVX512
	}
	if eax71, _, _, _ := cpuid(7, 1); eax71&(1<<5) == 0 {
		return AVX512
	}
	const (
		// CPUID leaf 7 sub-leaf 0, EDX bit 22: AMX-BF16, bit 24: AMX-TILE
		amx = 1<<22 | 1<<24
		// XCR0 bit 17: the tile configuration, 18: the tile data
		tileState = 1<<17 | 1<<18
	)
	if edx7&amx != amx || xcr0&tileState != tileState {
		return AVX512BF16
	}
	return AMXBF16
}

// cacheSizes reads the deterministic cache parameters: leaf 4 on Intel,
// leaf 0x8000001D (same layout) on AMD. It returns 0 for a cache that is
// not reported.
func cacheSizes() (l1d, l2 int) {
	maxLeaf, b, c, d := cpuid(0, 0)
	vendor := string([]byte{
		byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24),
		byte(d), byte(d >> 8), byte(d >> 16), byte(d >> 24),
		byte(c), byte(c >> 8), byte(c >> 16), byte(c >> 24),
	})
	leaf := uint32(4)
	switch vendor {
	case "GenuineIntel":
		if maxLeaf < 4 {
			return 0, 0
		}
	case "AuthenticAMD", "HygonGenuine":
		maxExt, _, _, _ := cpuid(0x80000000, 0)
		_, _, ecx, _ := cpuid(0x80000001, 0)
		const topoExt = 1 << 22
		if maxExt < 0x8000001D || ecx&topoExt == 0 {
			return 0, 0
		}
		leaf = 0x8000001D
	default:
		return 0, 0
	}
	for sub := uint32(0); sub < 16; sub++ {
		eax, ebx, ecx, _ := cpuid(leaf, sub)
		typ := eax & 31 // 0 none left, 1 data, 2 instruction, 3 unified
		if typ == 0 {
			break
		}
		level := (eax >> 5) & 7
		ways := int(ebx>>22) + 1
		parts := int((ebx>>12)&0x3ff) + 1
		line := int(ebx&0xfff) + 1
		sets := int(ecx) + 1
		size := ways * parts * line * sets
		switch {
		case level == 1 && typ == 1:
			l1d = size
		case level == 2 && typ != 2:
			l2 = size
		}
	}
	return l1d, l2
}
