// Package kernels holds the CPU backend's slice kernels: float32 loops over
// contiguous slices (GELU and its derivative, exponentials, softmax and
// LayerNorm rows, the four arithmetic ops, AdamW's update, float64 row sums)
// in AVX-512 and AVX2+FMA assembly on amd64, each beside a pure-Go twin of
// the same name and signature (gonum's internal/asm pattern): builds for other
// architectures and with the purego tag compile the twins
// (kernels_noasm.go) instead of the assembly (kernels_amd64.go and .s).
//
// Callers see slice functions that pick their path themselves: the
// AVX-512 kernels on whole blocks of 16 elements where the processor runs
// them, the AVX2 ones on a block of 8 after them, Go on the rest, as
// internal/cpu chose at start-up (cpu.Use, which WICK_CPU lowers). No
// function here branches on anything a caller passes to pick its path, and
// none panics for lack of assembly. SetLevel switches the path for tests
// that compare the paths; nothing else changes it.
//
// The results of a path can differ from another's only where a doc comment
// says so (sums taken in another order, a polynomial within an ulp of the
// float64 reference); kernels_amd64_test.go checks each assembly kernel
// against its Go twin within those bounds.
package kernels
