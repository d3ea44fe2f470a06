// Package backendtest is the one test suite that every tensor.Backend runs:
// the CPU backend in every build (this package's TestCPU, and TestCPUPaths
// once more for each lower CPU kernel path, WICK_CPU=purego and avx2), the
// CUDA backend under the cuda build tag (package cuda's TestBackend, on a
// real or an emulated GPU). It is modelled on gonum's blas/testblas and
// candle's test_device!: the checks are written once, against the backend
// interface, and a backend passes them or fails them.
//
// Each kernel of the interface, and of each optional interface a backend
// implements (tensor.FusedAttention, tensor.Normer, tensor.DropoutMasker),
// is checked against a plain float64 reference in this package on fresh
// random inputs: ragged shapes, strided, offset and broadcast views,
// special values (±0, ±Inf, NaN), forward and backward kernels alike.
// Every output is poisoned (NaN-filled) before a kernel runs, so an
// element a kernel forgets to write fails.
//
// Tolerances follow the length of the sums behind each result
// (tolerance.go): docs/design.md's 1e-5 relative (rule 7) for elementwise
// results, plus γ_n = n·u/(1−n·u) (u = 2⁻²⁴) of the size of the terms for
// a sum of n terms that a backend may accumulate in float32, and n·2⁻⁵²
// where the kernel contract says float64. So a 50,257-wide softmax row is allowed
// more rounding than a 5-wide one, while an element taken from its
// neighbour still fails (TestSuiteFailsBrokenKernels).
//
// The inputs come from a generator seeded from the clock; each check logs
// its seed, and the -seed flag repeats a run.
package backendtest
