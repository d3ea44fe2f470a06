// Package cpu reports the processor features that Wick's assembly kernels
// need, so that each package picks its fast path from one check.
//
// The path is chosen once, when the program starts: the best level the
// processor and the operating system support (Detected), lowered by the
// environment variable WICK_CPU when it is set to purego, avx2, avx512 or
// avx512bf16, so that tests and benchmarks can compare the paths on one
// machine. A request for a level the machine lacks falls back to the best
// level it has, with a one-line message on standard error; an unknown value
// is ignored with a message.
//
// AMXBF16 is opt-in: it runs only where WICK_CPU=amx asks for it (and the
// processor and Linux grant the tile state), until its kernel has been
// measured on a machine with AMX; without the variable an AMX machine runs
// at AVX512BF16.
package cpu

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Level is an instruction-set level that Wick has kernels for; a higher
// level implies the lower ones.
type Level int

const (
	// Generic is the portable pure-Go path.
	Generic Level = iota
	// AVX2 is AVX2 with FMA, and the OS saving the YMM registers.
	AVX2
	// AVX512 is AVX-512 F, BW, DQ and VL, and the OS saving the ZMM and
	// opmask registers (Intel since Skylake-SP, AMD since Zen 4).
	AVX512
	// AVX512BF16 is AVX512 with AVX512_BF16 (VDPBF16PS, the bfloat16 dot
	// product with float32 accumulation; Intel since Cooper Lake, AMD
	// since Zen 4).
	AVX512BF16
	// AMXBF16 is AVX512BF16 with the AMX-TILE and AMX-BF16 tiles
	// (TDPBF16PS: a 16×16 float32 tile += a 16×32 by 32×16 bfloat16
	// product per instruction; Intel since Sapphire Rapids), the OS saving
	// the tile state and granting it to the process (Linux's
	// arch_prctl(ARCH_REQ_XCOMP_PERM)). Opt-in: see the package comment.
	AMXBF16
)

// String returns the level's name as WICK_CPU spells it.
func (l Level) String() string {
	switch l {
	case Generic:
		return "purego"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	case AVX512BF16:
		return "avx512bf16"
	case AMXBF16:
		return "amx"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Detected is the best level the processor and the operating system
// support. It is Generic on other architectures and in builds with the
// purego tag.
var Detected = detect()

// Use is the level the kernels run at: Detected (at most AVX512BF16, as
// AMXBF16 is opt-in), or the level that WICK_CPU asks for. The variable is
// read once, when the program starts, before go test records what a test
// reads: its cache does not see WICK_CPU, so run go test with -count=1 when
// switching paths.
var Use = grant(choose(os.Getenv("WICK_CPU"), Detected, os.Stderr), requestAMX, os.Stderr)

// HasAVX2FMA reports whether the AVX2+FMA kernels run: the processor has
// AVX2 and FMA, the operating system saves the YMM registers, and WICK_CPU
// does not ask for the pure-Go path.
var HasAVX2FMA = Use >= AVX2

// HasAVX512 reports whether the AVX-512 kernels run: the processor has
// AVX-512 F, BW, DQ and VL, the operating system saves the ZMM and opmask
// registers, and WICK_CPU does not ask for a lower path.
var HasAVX512 = Use >= AVX512

// HasAVX512BF16 reports whether the bfloat16 kernels that use AVX512_BF16
// run: the processor has it beside AVX512, and WICK_CPU does not ask for a
// lower path (WICK_CPU=avx512 keeps the other AVX-512 kernels and turns
// these off).
var HasAVX512BF16 = Use >= AVX512BF16

// HasAMXBF16 reports whether the AMX bfloat16 tile kernels run: the
// processor has AMX-TILE and AMX-BF16 beside AVX512BF16, WICK_CPU=amx asks
// for them, and the operating system granted the tile state.
var HasAMXBF16 = Use >= AMXBF16

// L1D and L2 are the sizes in bytes of the level-1 data cache and the
// level-2 cache of one core, from CPUID (leaf 4 on Intel, 0x8000001D on
// AMD); 0 where the processor does not report them.
var L1D, L2 = cacheSizes()

// choose returns the level that the WICK_CPU value env selects on a machine
// that supports detected, writing a one-line message to w when it cannot
// honour the request.
func choose(env string, detected Level, w io.Writer) Level {
	env = strings.TrimSpace(strings.ToLower(env))
	if env == "" {
		return min(detected, AVX512BF16)
	}
	var want Level
	switch env {
	case "purego", "generic":
		want = Generic
	case "avx2":
		want = AVX2
	case "avx512":
		want = AVX512
	case "avx512bf16":
		want = AVX512BF16
	case "amx":
		want = AMXBF16
	default:
		detected = min(detected, AVX512BF16)
		fmt.Fprintf(w, "wick: WICK_CPU=%q is not one of purego, avx2, avx512, avx512bf16, amx; ignored, using %s\n", env, detected)
		return detected
	}
	if want > detected {
		detected = min(detected, AVX512BF16)
		fmt.Fprintf(w, "wick: WICK_CPU=%s asks for a path this processor or operating system lacks; using %s\n", env, detected)
		return detected
	}
	return want
}

// grant returns level, or AVX512BF16 when level is AMXBF16 and request
// (asking the operating system for the tile state) fails, writing a
// one-line message to w then.
func grant(level Level, request func() error, w io.Writer) Level {
	if level != AMXBF16 {
		return level
	}
	if err := request(); err != nil {
		fmt.Fprintf(w, "wick: WICK_CPU=amx: the operating system does not grant the AMX tile state (%v); using %s\n", err, AVX512BF16)
		return AVX512BF16
	}
	return level
}
