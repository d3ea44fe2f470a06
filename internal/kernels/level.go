package kernels

import "github.com/wickml/wick/internal/cpu"

// avx2 and avx512 say whether the AVX2+FMA and the AVX-512 kernels run:
// the processor has them, internal/cpu chose them (WICK_CPU did not lower
// the level) and this build has the assembly. SetLevel alone changes them.
var avx2, avx512 = hasAsm && cpu.Use >= cpu.AVX2, hasAsm && cpu.Use >= cpu.AVX512

// Level returns the instruction-set level the kernels run at.
func Level() cpu.Level {
	switch {
	case avx512:
		return cpu.AVX512
	case avx2:
		return cpu.AVX2
	}
	return cpu.Generic
}

// HasAsm reports whether this build has the assembly kernels (amd64
// without the purego tag); where it does, they run as far as cpu.Detected
// allows.
const HasAsm = hasAsm

// SetLevel switches the kernels to level l, capped at what this build and
// processor run (cpu.Detected), and returns a function that restores the
// previous level. It is for tests that compare the paths: the kernels read
// the level without synchronisation, so no kernel may run on another
// goroutine while it changes.
func SetLevel(l cpu.Level) (restore func()) {
	a, b := avx2, avx512
	l = min(l, cpu.Detected)
	avx2, avx512 = hasAsm && l >= cpu.AVX2, hasAsm && l >= cpu.AVX512
	return func() { avx2, avx512 = a, b }
}
