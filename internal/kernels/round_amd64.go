//go:build amd64 && !purego

package kernels

// roundBF16AVX2 is roundBF16Go for n elements, n a multiple of 8.
//
//go:noescape
func roundBF16AVX2(dst, src *float32, n int)

// roundBF16AVX512 is roundBF16Go for n elements, n a multiple of 16.
//
//go:noescape
func roundBF16AVX512(dst, src *float32, n int)

// roundBF16BitsAVX2 is roundBF16BitsGo for n elements, n a multiple of 8.
//
//go:noescape
func roundBF16BitsAVX2(dst *uint16, src *float32, n int)

// roundBF16BitsAVX512 is roundBF16BitsGo for n elements, n a multiple of
// 16.
//
//go:noescape
func roundBF16BitsAVX512(dst *uint16, src *float32, n int)
