// embedding.cu: row gather (embedding lookup) and its backward, row
// scatter-add.
//
// Gather:     dst[i, :] = src[idx[i], :]
// ScatterAdd: dst[idx[i], :] += src[i, :]   (atomic adds: rows may repeat)
// An index outside [0, nrows) is never dereferenced: Gather writes NaN into
// that row of dst, ScatterAdd skips it (the tensor package rejects such
// indices before launching).
//
// Shape legend: idx: (n,) int64; the gathered side: (n, L) contiguous; the
// table side: (nrows, L) contiguous.
// Launch: one thread per element of the (n, L) side, 1-D grid-stride.

#include "common.cuh"

// wick_gather_f32: dst (n, L) = rows idx of src (nrows, L).
extern "C" __global__ void wick_gather_f32(float* dst, const float* src, const i64* idx, i64 n, i64 L,
                                           i64 nrows) {
    for (i64 e = wick_tid(); e < n * L; e += wick_nthreads()) {
        i64 i = e / L, c = e - i * L;
        i64 r = idx[i];
        dst[e] = (r >= 0 && r < nrows) ? src[r * L + c] : wick_nan();
    }
}

// wick_gather_u16: wick_gather_f32 for the bit patterns of a 16-bit
// float dtype (0xFFFF, a NaN of both, for an index out of range).
extern "C" __global__ void wick_gather_u16(unsigned short* dst, const unsigned short* src, const i64* idx, i64 n,
                                           i64 L, i64 nrows) {
    for (i64 e = wick_tid(); e < n * L; e += wick_nthreads()) {
        i64 i = e / L, c = e - i * L;
        i64 r = idx[i];
        dst[e] = (r >= 0 && r < nrows) ? src[r * L + c] : (unsigned short)0xFFFF;
    }
}

// wick_scatter_add_f32: dst (nrows, L) rows idx += src (n, L).
extern "C" __global__ void wick_scatter_add_f32(float* dst, const i64* idx, const float* src, i64 n,
                                                i64 L, i64 nrows) {
    for (i64 e = wick_tid(); e < n * L; e += wick_nthreads()) {
        i64 i = e / L, c = e - i * L;
        i64 r = idx[i];
        if (r >= 0 && r < nrows) atomicAdd(dst + r * L + c, src[e]);
    }
}
