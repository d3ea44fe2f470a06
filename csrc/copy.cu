// copy.cu: strided copies, dtype conversions and fills.
//
// Copy moves the elements of a strided source view into a strided
// destination view of the same shape (making a transposed or sliced view
// contiguous is a copy into a dense destination). Conversions follow the
// CPU reference: int64 → float32 rounds to nearest, float32 → int64
// truncates toward zero, and NaN, ±Inf and values outside [−2^63, 2^63)
// become INT64_MIN (tensor.ToInt64: PyTorch's CPU result; the bare
// conversion, cvt.rzi.s64.f32, would give 0 for NaN and saturate).
// Casts to and from bfloat16 and float16 round as the CPU reference does
// (half.cuh). Fill sets every element of a strided view.
//
// Shape legend: n = number of elements of the shape s; d = destination
// strides, t = source strides.

#include "common.cuh"

// wick_cvt converts one element: a plain conversion, except float32 →
// int64 (wick_f32_to_i64).
template <typename D, typename S> __device__ __forceinline__ D wick_cvt(S v) { return (D)v; }

// wick_f32_to_i64 truncates toward zero; NaN, ±Inf and values outside
// [−2^63, 2^63) give INT64_MIN, as tensor.ToInt64 does.
template <> __device__ __forceinline__ i64 wick_cvt<i64, float>(float v) {
    return (v >= -9223372036854775808.0f && v < 9223372036854775808.0f) ? (i64)v
                                                                         : (i64)0x8000000000000000ull;
}

// copy_body: dst(d)[i] = (D)src(t)[i] for the n elements of shape s: the
// body of the copy and cast kernels below. Launch: 1-D grid-stride.
template <typename D, typename S>
__device__ __forceinline__ void copy_body(D* dst, const S* src, i64 n, int nd, const i64* shape, const i64* sd,
                                          const i64* ss) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        i64 od, os;
        wick_offsets2(i, nd, shape, sd, ss, &od, &os);
        dst[od] = wick_cvt<D, S>(src[os]);
    }
}

// WICK_COPY_KERNEL defines the kernel name copying S elements into D ones.
#define WICK_COPY_KERNEL(name, D, S)                                                                        \
    extern "C" __global__ void name(D* dst, const S* src, i64 n, int nd, WICK_SHAPE, WICK_STRIDES(d),      \
                                    WICK_STRIDES(t)) {                                                      \
        const i64 shape[WICK_MAXD] = WICK_ARR(s), sd[WICK_MAXD] = WICK_ARR(d), ss[WICK_MAXD] = WICK_ARR(t); \
        copy_body<D, S>(dst, src, n, nd, shape, sd, ss);                                                    \
    }

// wick_copy_f32, wick_copy_i64: dst(d)[i] = src(t)[i].
WICK_COPY_KERNEL(wick_copy_f32, float, float)
WICK_COPY_KERNEL(wick_copy_i64, i64, i64)
// wick_cast_i64_f32: float32 dst = int64 src, rounded to nearest.
WICK_COPY_KERNEL(wick_cast_i64_f32, float, i64)
// wick_cast_f32_i64: int64 dst = float32 src, truncated toward zero
// (INT64_MIN for NaN, ±Inf and out-of-range values).
WICK_COPY_KERNEL(wick_cast_f32_i64, i64, float)

// Casts with a 16-bit float side go through float32 (wick_ld, wick_st:
// half.cuh), as the CPU reference's do: int64 → 16-bit rounds to float32
// first, 16-bit → int64 truncates the exact float32 value.
__device__ __forceinline__ float wick_ld(const i64* p) { return (float)*p; }
__device__ __forceinline__ void wick_st(i64* p, float v) { *p = wick_cvt<i64, float>(v); }

// WICK_CAST16_KERNEL defines the kernel name casting S elements into D
// ones through float32. Launch: 1-D grid-stride.
#define WICK_CAST16_KERNEL(name, D, S)                                                                      \
    extern "C" __global__ void name(D* dst, const S* src, i64 n, int nd, WICK_SHAPE, WICK_STRIDES(d),      \
                                    WICK_STRIDES(t)) {                                                      \
        const i64 shape[WICK_MAXD] = WICK_ARR(s), sd[WICK_MAXD] = WICK_ARR(d), ss[WICK_MAXD] = WICK_ARR(t); \
        for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {                                            \
            i64 od, os;                                                                                     \
            wick_offsets2(i, nd, shape, sd, ss, &od, &os);                                                  \
            wick_st(dst + od, wick_ld(src + os));                                                           \
        }                                                                                                   \
    }

// wick_copy_u16: the bit patterns of a 16-bit dtype (NaN payloads kept).
WICK_COPY_KERNEL(wick_copy_u16, unsigned short, unsigned short)
// wick_cast_<src>_<dst>: dst(d)[i] = src(t)[i] converted.
WICK_CAST16_KERNEL(wick_cast_f32_bf16, wick_bf16, float)
WICK_CAST16_KERNEL(wick_cast_bf16_f32, float, wick_bf16)
WICK_CAST16_KERNEL(wick_cast_f32_f16, wick_f16, float)
WICK_CAST16_KERNEL(wick_cast_f16_f32, float, wick_f16)
WICK_CAST16_KERNEL(wick_cast_bf16_f16, wick_f16, wick_bf16)
WICK_CAST16_KERNEL(wick_cast_f16_bf16, wick_bf16, wick_f16)
WICK_CAST16_KERNEL(wick_cast_i64_bf16, wick_bf16, i64)
WICK_CAST16_KERNEL(wick_cast_bf16_i64, i64, wick_bf16)
WICK_CAST16_KERNEL(wick_cast_i64_f16, wick_f16, i64)
WICK_CAST16_KERNEL(wick_cast_f16_i64, i64, wick_f16)

// wick_fill_u16: dst(d)[i] = v for the n elements of shape s: the bit
// pattern v (its low 16 bits) of a 16-bit dtype. Launch: 1-D grid-stride.
extern "C" __global__ void wick_fill_u16(unsigned short* dst, unsigned v, i64 n, int nd, WICK_SHAPE,
                                         WICK_STRIDES(d)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), sd[WICK_MAXD] = WICK_ARR(d);
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) dst[wick_offset(i, nd, shape, sd)] = (unsigned short)v;
}

// wick_fill_f32: dst(d)[i] = v for the n elements of shape s.
// Launch: 1-D grid-stride.
extern "C" __global__ void wick_fill_f32(float* dst, float v, i64 n, int nd, WICK_SHAPE,
                                         WICK_STRIDES(d)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), sd[WICK_MAXD] = WICK_ARR(d);
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) dst[wick_offset(i, nd, shape, sd)] = v;
}

// wick_fill_i64: wick_fill_f32 for int64 elements.
extern "C" __global__ void wick_fill_i64(i64* dst, i64 v, i64 n, int nd, WICK_SHAPE, WICK_STRIDES(d)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), sd[WICK_MAXD] = WICK_ARR(d);
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) dst[wick_offset(i, nd, shape, sd)] = v;
}
