//go:build !amd64 || purego

package blas

// The Go twins of the kernels of pack16_amd64.s, under their names, for
// builds without the assembly; keep in step with pack16_amd64.go.

// pack16Asm is false: the packing takes its Go loops.
var pack16Asm = false

func round16AVX512(dst *uint16, dld int, src *float32, sld, rows, n int) {
	round16Go(dst, dld, src, sld, rows, n)
}

func interleaveF16AVX512(dst *uint32, gs int, src *float32, ld, kp int, lanes, store uint32) {
	interleaveF16Go(dst, gs, src, ld, kp, lanes, store)
}

func interleaveH16AVX512(dst *uint32, gs int, src *uint16, ld, kp int, lanes, store uint32) {
	interleaveH16Go(dst, gs, src, ld, kp, lanes, store)
}

func gatherPairsAVX512(dst *uint32, gs int, src *uint16, off *[32]int32, kp int, lanes, store uint32) {
	gatherPairsGo(dst, gs, src, off, kp, lanes, store)
}

func transposePairsAVX512(dst *uint32, gs int, src *uint16, ld, blocks int) {
	transposePairsGo(dst, gs, src, ld, blocks)
}
