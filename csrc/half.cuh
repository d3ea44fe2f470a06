// half.cuh: the 16-bit float dtypes, bfloat16 and float16, as kernels
// store them, and their conversions to and from float32.
//
// The element types are structs of the bit pattern (wick_bf16, wick_f16)
// so that templates tell them apart. The conversions are spelled out on
// the bits as the CPU reference's (tensor/dtype16.go) are, rather than
// through cuda_bf16.h's intrinsics, whose NaN results differ: float32 to
// bfloat16 or float16 rounds to nearest, ties to even; beyond the largest
// finite value is ±Inf; float32 subnormals round like any value (bfloat16)
// or become float16 subnormals or ±0; a NaN becomes 0xFFFF (bfloat16) or
// 0x7E00 with its sign (float16). The other way is exact (a float16 NaN
// keeps its payload and becomes quiet).
//
// wick_ld and wick_st read and write one element of any float dtype as
// float32: the 16-bit dtypes' arithmetic is float32 with one rounding at
// the store, as PyTorch's kernels do.

#pragma once

struct wick_bf16 {
    unsigned short x;
};
struct wick_f16 {
    unsigned short x;
};

__device__ __forceinline__ float wick_bf16_to_f32(unsigned short h) { return __uint_as_float((unsigned)h << 16); }

__device__ __forceinline__ unsigned short wick_f32_to_bf16(float f) {
    if (f != f) return 0xFFFF;
    unsigned b = __float_as_uint(f);
    return (unsigned short)((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

__device__ __forceinline__ float wick_f16_to_f32(unsigned short h) {
    unsigned sign = (unsigned)(h & 0x8000u) << 16;
    unsigned exp = (h >> 10) & 0x1Fu;
    unsigned man = h & 0x3FFu;
    if (exp == 0x1F) return __uint_as_float(man ? (sign | 0x7FC00000u | man << 13) : (sign | 0x7F800000u));
    if (exp != 0) return __uint_as_float(sign | (exp + 112u) << 23 | man << 13);
    if (man == 0) return __uint_as_float(sign);
    float v = (float)man * 5.9604644775390625e-8f; // 2^-24: a subnormal, exact
    return sign ? -v : v;
}

__device__ __forceinline__ unsigned short wick_f32_to_f16(float f) {
    unsigned b = __float_as_uint(f);
    unsigned short sign = (unsigned short)(b >> 16) & 0x8000u;
    int exp = (int)(b >> 23) & 0xFF;
    unsigned man = b & 0x7FFFFFu;
    if (exp == 0xFF) return sign | (man ? 0x7E00u : 0x7C00u);
    int e = exp - 127 + 15;
    if (e >= 0x1F) return sign | 0x7C00u;
    if (e <= 0) {
        if (e < -10) return sign;
        unsigned m = man | 0x800000u;
        unsigned shift = (unsigned)(14 - e);
        unsigned r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) ++r;
        return sign | (unsigned short)r;
    }
    unsigned r = (unsigned)e << 10 | man >> 13;
    unsigned rem = man & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r; // a carry into the exponent is right, up to Inf
    return sign | (unsigned short)r;
}

__device__ __forceinline__ float wick_ld(const float* p) { return *p; }
__device__ __forceinline__ float wick_ld(const wick_bf16* p) { return wick_bf16_to_f32(p->x); }
__device__ __forceinline__ float wick_ld(const wick_f16* p) { return wick_f16_to_f32(p->x); }
__device__ __forceinline__ void wick_st(float* p, float v) { *p = v; }
__device__ __forceinline__ void wick_st(wick_bf16* p, float v) { p->x = wick_f32_to_bf16(v); }
__device__ __forceinline__ void wick_st(wick_f16* p, float v) { p->x = wick_f32_to_f16(v); }
