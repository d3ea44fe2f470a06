//go:build !amd64 || purego

package kernels

func roundBF16AVX2(dst, src *float32, n int)   { roundBF16Go(f32s(dst, n), f32s(src, n)) }
func roundBF16AVX512(dst, src *float32, n int) { roundBF16Go(f32s(dst, n), f32s(src, n)) }
