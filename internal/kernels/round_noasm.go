//go:build !amd64 || purego

package kernels

import "unsafe"

func roundBF16AVX2(dst, src *float32, n int)   { roundBF16Go(f32s(dst, n), f32s(src, n)) }
func roundBF16AVX512(dst, src *float32, n int) { roundBF16Go(f32s(dst, n), f32s(src, n)) }

func roundBF16BitsAVX2(dst *uint16, src *float32, n int) {
	roundBF16BitsGo(unsafe.Slice(dst, n), f32s(src, n))
}

func roundBF16BitsAVX512(dst *uint16, src *float32, n int) {
	roundBF16BitsGo(unsafe.Slice(dst, n), f32s(src, n))
}
