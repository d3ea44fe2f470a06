package kernels

import "math"

// RoundBF16 writes into dst (at least src's length; it may be src) the
// float32 values of src's elements rounded to bfloat16, as the cast to
// bfloat16 and back gives them: round to nearest even on the bit pattern
// (subnormals included, large finite values to ±Inf), ±Inf kept, and every
// NaN the bfloat16 NaN 0xFFFF widened (0xFFFF0000), as the cast writes it.
// The AVX-512 kernel takes whole blocks of 16 elements, the AVX2 one a
// block of 8 after them, Go the rest; all give the same bits.
func RoundBF16(dst, src []float32) {
	dst = dst[:len(src)]
	if n := len(src) &^ 15; avx512 && n > 0 {
		roundBF16AVX512(&dst[0], &src[0], n)
		dst, src = dst[n:], src[n:]
	}
	if n := len(src) &^ 7; avx2 && n > 0 {
		roundBF16AVX2(&dst[0], &src[0], n)
		dst, src = dst[n:], src[n:]
	}
	roundBF16Go(dst, src)
}

// roundBF16Go is RoundBF16 in Go.
func roundBF16Go(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		b := math.Float32bits(v)
		r := (b + 0x7FFF + (b>>16)&1) &^ 0xFFFF
		if b&0x7FFFFFFF > 0x7F800000 { // NaN
			r = 0xFFFF0000
		}
		dst[i] = math.Float32frombits(r)
	}
}

// RoundBF16Bits writes into dst (at least src's length) the bfloat16 bit
// patterns of src's elements, as RoundBF16 rounds them (every NaN 0xFFFF),
// with the same split between the paths.
func RoundBF16Bits(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	if n := len(src) &^ 15; avx512 && n > 0 {
		roundBF16BitsAVX512(&dst[0], &src[0], n)
		dst, src = dst[n:], src[n:]
	}
	if n := len(src) &^ 7; avx2 && n > 0 {
		roundBF16BitsAVX2(&dst[0], &src[0], n)
		dst, src = dst[n:], src[n:]
	}
	roundBF16BitsGo(dst, src)
}

// roundBF16BitsGo is RoundBF16Bits in Go.
func roundBF16BitsGo(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		b := math.Float32bits(v)
		h := uint16((b + 0x7FFF + (b>>16)&1) >> 16)
		if b&0x7FFFFFFF > 0x7F800000 { // NaN
			h = 0xFFFF
		}
		dst[i] = h
	}
}
