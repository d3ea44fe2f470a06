// copy.cu: strided copies, dtype conversions and fills.
//
// Copy moves the elements of a strided source view into a strided
// destination view of the same shape (making a transposed or sliced view
// contiguous is a copy into a dense destination). Conversions follow the
// CPU reference: int64 → float32 rounds to nearest, float32 → int64
// truncates toward zero. Fill sets every element of a strided view.
//
// Shape legend: n = number of elements of the shape s; d = destination
// strides, t = source strides.

#include "common.cuh"

// wick_copy_f32: dst(d)[i] = src(t)[i] for the n elements of shape s.
// Launch: 1-D grid-stride.
extern "C" __global__ void wick_copy_f32(float* dst, const float* src, i64 n, int nd, WICK_SHAPE,
                                         WICK_STRIDES(d), WICK_STRIDES(t)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), sd[WICK_MAXD] = WICK_ARR(d), ss[WICK_MAXD] = WICK_ARR(t);
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        i64 od, os;
        wick_offsets2(i, nd, shape, sd, ss, &od, &os);
        dst[od] = src[os];
    }
}

// wick_copy_i64: wick_copy_f32 for int64 elements.
extern "C" __global__ void wick_copy_i64(i64* dst, const i64* src, i64 n, int nd, WICK_SHAPE,
                                         WICK_STRIDES(d), WICK_STRIDES(t)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), sd[WICK_MAXD] = WICK_ARR(d), ss[WICK_MAXD] = WICK_ARR(t);
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        i64 od, os;
        wick_offsets2(i, nd, shape, sd, ss, &od, &os);
        dst[od] = src[os];
    }
}

// wick_cast_i64_f32: float32 dst(d)[i] = int64 src(t)[i], rounded to
// nearest. Launch: 1-D grid-stride.
extern "C" __global__ void wick_cast_i64_f32(float* dst, const i64* src, i64 n, int nd, WICK_SHAPE,
                                             WICK_STRIDES(d), WICK_STRIDES(t)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), sd[WICK_MAXD] = WICK_ARR(d), ss[WICK_MAXD] = WICK_ARR(t);
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        i64 od, os;
        wick_offsets2(i, nd, shape, sd, ss, &od, &os);
        dst[od] = (float)src[os];
    }
}

// wick_cast_f32_i64: int64 dst(d)[i] = float32 src(t)[i] truncated toward
// zero. Launch: 1-D grid-stride.
extern "C" __global__ void wick_cast_f32_i64(i64* dst, const float* src, i64 n, int nd, WICK_SHAPE,
                                             WICK_STRIDES(d), WICK_STRIDES(t)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), sd[WICK_MAXD] = WICK_ARR(d), ss[WICK_MAXD] = WICK_ARR(t);
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        i64 od, os;
        wick_offsets2(i, nd, shape, sd, ss, &od, &os);
        dst[od] = (i64)src[os];
    }
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
