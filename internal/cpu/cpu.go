// Package cpu reports the processor features that Wick's assembly kernels
// need, so that each package picks its fast path from one check.
package cpu

// HasAVX2FMA reports whether the processor has AVX2 and FMA and the
// operating system saves the YMM registers across context switches. It is
// false on other architectures and in builds with the purego tag.
var HasAVX2FMA = hasAVX2FMA()
