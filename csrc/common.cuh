// common.cuh: helpers shared by the Wick kernel library.
//
// Conventions of every kernel in csrc/:
//
//   - Names follow wick_<op>_<dtype> (f32 for float32 data, bf16 and f16
//     for the 16-bit ones, i64 where the inputs are int64), declared extern "C" so the PTX symbol is the name.
//   - Pointers point at the first element of the view: the Go side folds a
//     layout's offset into the pointer, so kernels never see offsets.
//   - Strided operands are described by up to WICK_MAXD dims, right-aligned:
//     slots [WICK_MAXD-nd, WICK_MAXD) hold the dims, leading slots are
//     unused. Shapes and strides are passed as scalar parameters (s0..s5,
//     a0..a5, ...) because kernels are launched through the driver API with
//     one 8-byte slot per parameter. Views with more dims than WICK_MAXD
//     after merging contiguous dims are split into several launches by the
//     Go side.
//   - Element counts and strides are 64-bit; each index is checked against
//     its bound before a load or store.
//   - 1-D kernels use a grid-stride loop: launch shape <<<min(ceil(n/256),
//     WICK_MAXBLOCKS), 256>>>, any grid is correct. Row kernels use one
//     block per row: <<<min(rows, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>, also
//     striding over rows.
//   - Arithmetic follows the CPU reference backend (tensor/cpu*.go):
//     transcendental functions and sums are computed in double and rounded
//     once, and the PTX is compiled with -fmad=false so that float
//     expressions round like Go's.

#pragma once

typedef long long i64;

// The 16-bit float element types and their conversions.
#include "half.cuh"

#define WICK_MAXD 6
// The block size of the row kernels (a power of two). Only the emulated
// driver (scripts/kernel_emu/driver.cpp) builds with another value.
#ifndef WICK_ROWTHREADS
#define WICK_ROWTHREADS 256
#endif

// The binary ops' enum is in binary_ops.cuh, generated from
// tensor/binary_ops.go.

// The reductions, in the order of tensor.ReduceOp.
enum {
    WICK_RSUM, WICK_RMAX, WICK_RMIN, WICK_RARGMAX, WICK_RARGMIN, WICK_RLOGSUMEXP
};

// Parameter lists for a shape and for the strides of one operand.
#define WICK_SHAPE i64 s0, i64 s1, i64 s2, i64 s3, i64 s4, i64 s5
#define WICK_STRIDES(p) i64 p##0, i64 p##1, i64 p##2, i64 p##3, i64 p##4, i64 p##5
#define WICK_ARR(p) {p##0, p##1, p##2, p##3, p##4, p##5}

// The first element index of the grid-stride loop and its step.
__device__ __forceinline__ i64 wick_tid() {
    return (i64)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ i64 wick_nthreads() {
    return (i64)gridDim.x * blockDim.x;
}

// wick_offset returns the storage offset of element i (row-major over
// shape) for strides st. nd is the number of used (right-aligned) dims.
__device__ __forceinline__ i64 wick_offset(i64 i, int nd, const i64 shape[WICK_MAXD],
                                           const i64 st[WICK_MAXD]) {
    i64 off = 0;
#pragma unroll
    for (int d = WICK_MAXD - 1; d >= 0; --d) {
        if (d >= WICK_MAXD - nd) {
            i64 c = i % shape[d];
            i /= shape[d];
            off += c * st[d];
        }
    }
    return off;
}

// wick_offsets2 is wick_offset for two operands at once.
__device__ __forceinline__ void wick_offsets2(i64 i, int nd, const i64 shape[WICK_MAXD],
                                              const i64 sa[WICK_MAXD], const i64 sb[WICK_MAXD],
                                              i64* oa, i64* ob) {
    i64 a = 0, b = 0;
#pragma unroll
    for (int d = WICK_MAXD - 1; d >= 0; --d) {
        if (d >= WICK_MAXD - nd) {
            i64 c = i % shape[d];
            i /= shape[d];
            a += c * sa[d];
            b += c * sb[d];
        }
    }
    *oa = a;
    *ob = b;
}

// wick_nan returns a quiet NaN.
__device__ __forceinline__ float wick_nan() { return __int_as_float(0x7fffffff); }

// Block-wide reductions over WICK_ROWTHREADS threads (blockDim.x must equal
// WICK_ROWTHREADS). Every thread gets the result. buf is shared scratch of
// WICK_ROWTHREADS elements; the functions synchronise before returning so
// buf may be reused at once.
__device__ __forceinline__ double wick_block_sum(double v, double* buf) {
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = WICK_ROWTHREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    double r = buf[0];
    __syncthreads();
    return r;
}

// wick_block_max returns the maximum, NaN if any thread holds NaN.
__device__ __forceinline__ float wick_block_max(float v, float* buf) {
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = WICK_ROWTHREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float a = buf[threadIdx.x], b = buf[threadIdx.x + s];
            buf[threadIdx.x] = (a != a || b != b) ? wick_nan() : fmaxf(a, b);
        }
        __syncthreads();
    }
    float r = buf[0];
    __syncthreads();
    return r;
}

// wick_block_min is wick_block_max for the minimum.
__device__ __forceinline__ float wick_block_min(float v, float* buf) {
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = WICK_ROWTHREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float a = buf[threadIdx.x], b = buf[threadIdx.x + s];
            buf[threadIdx.x] = (a != a || b != b) ? wick_nan() : fminf(a, b);
        }
        __syncthreads();
    }
    float r = buf[0];
    __syncthreads();
    return r;
}

// wick_row_max returns the maximum of the n elements x[0], x[st], ... as
// the CPU reference computes it for softmax (NaN propagates), reduced over
// the block.
__device__ __forceinline__ float wick_row_max(const float* x, i64 n, i64 st, float* buf) {
    float m = -__int_as_float(0x7f800000);
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
        float v = x[j * st];
        m = (v != v || m != m) ? wick_nan() : fmaxf(m, v);
    }
    return wick_block_max(m, buf);
}

// wick_gomax is Go's math.Max, which the CPU reference's logsumexp uses:
// +Inf wins over NaN, NaN over any other number. (The combination is
// order-independent, so a parallel reduction gives the sequential result.)
__device__ __forceinline__ float wick_gomax(float a, float b) {
    if (isinf(a) && a > 0) return a;
    if (isinf(b) && b > 0) return b;
    if (a != a || b != b) return wick_nan();
    return fmaxf(a, b);
}

// wick_row_logsumexp returns log Σ exp over n elements with stride st,
// like the CPU reference's reduceLine(ReduceLogSumExp): the maximum m
// (math.Max), an infinite m returned as is, the sum of exp(x - m) in
// double, and m + log(sum) rounded once. n == 0 gives -inf. fbuf and dbuf
// are shared scratch of WICK_ROWTHREADS elements.
__device__ __forceinline__ float wick_row_logsumexp(const float* x, i64 n, i64 st, float* fbuf,
                                                    double* dbuf) {
    if (n == 0) return -__int_as_float(0x7f800000);
    float m = -__int_as_float(0x7f800000);
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) m = wick_gomax(m, x[j * st]);
    fbuf[threadIdx.x] = m;
    __syncthreads();
    for (int s = WICK_ROWTHREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) fbuf[threadIdx.x] = wick_gomax(fbuf[threadIdx.x], fbuf[threadIdx.x + s]);
        __syncthreads();
    }
    m = fbuf[0];
    __syncthreads();
    if (isinf(m)) return m;
    double acc = 0;
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) acc += exp((double)x[j * st] - (double)m);
    acc = wick_block_sum(acc, dbuf);
    return (float)((double)m + log(acc));
}

// WICK_MAXBLOCKS is the largest grid the Go launchers use; grid-stride
// loops cover the rest.
#define WICK_MAXBLOCKS 65535
