// reduce.cu: reductions of a float32 tensor along one dimension.
//
// Sum, max, min, logsumexp (float32 results) and argmax, argmin (int64
// results, the first extreme; NaN counts as the extreme, as in the CPU
// reference tensor/cpu_reduce.go). Sums accumulate in double.
//
// Shape legend: the source is a strided view; the output has the source's
// shape without the reduced dim, nout elements, contiguous. The output's
// shape s and the source strides t of the kept dims locate each output's
// first source element; the reduced dim has n elements with stride r.
//
// Two launch shapes: the block kernels (wick_reduce_f32,
// wick_argreduce_f32) use one block of WICK_ROWTHREADS threads per output
// <<<min(nout, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>, for long reduced dims;
// the small kernels (wick_reduce_small_f32, wick_argreduce_small_f32) use
// one thread per output, 1-D grid-stride, for short ones.

#include "common.cuh"

// wick_reduce_line reduces n elements x[0], x[r], ... sequentially, exactly
// as the CPU reference's reduceLine does.
__device__ float wick_reduce_line(int op, const float* x, i64 n, i64 r) {
    switch (op) {
    case WICK_RSUM: {
        double acc = 0;
        for (i64 j = 0; j < n; ++j) acc += (double)x[j * r];
        return (float)acc;
    }
    case WICK_RMAX:
    case WICK_RMIN: {
        if (n == 0) return wick_nan();
        float best = x[0];
        for (i64 j = 1; j < n; ++j) {
            float v = x[j * r];
            if (v != v) return v;
            if ((op == WICK_RMAX && v > best) || (op == WICK_RMIN && v < best)) best = v;
        }
        return best;
    }
    case WICK_RLOGSUMEXP: {
        if (n == 0) return -__int_as_float(0x7f800000);
        float mf = x[0];
        for (i64 j = 1; j < n; ++j) mf = wick_gomax(mf, x[j * r]);
        if (isinf(mf)) return mf;
        double m = (double)mf;
        double acc = 0;
        for (i64 j = 0; j < n; ++j) acc += exp((double)x[j * r] - m);
        return (float)(m + log(acc));
    }
    }
    return wick_nan();
}

// wick_reduce_small_f32: dst[o] = op over the reduced dim of output o's
// line. dst: (nout,). Launch: 1-D grid-stride over outputs.
extern "C" __global__ void wick_reduce_small_f32(float* dst, const float* src, i64 nout, i64 n, i64 r,
                                                 int op, int nd, WICK_SHAPE, WICK_STRIDES(t)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), st[WICK_MAXD] = WICK_ARR(t);
    for (i64 o = wick_tid(); o < nout; o += wick_nthreads())
        dst[o] = wick_reduce_line(op, src + wick_offset(o, nd, shape, st), n, r);
}

// wick_reduce_f32: as wick_reduce_small_f32 with one block per output.
// Launch: <<<min(nout, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.
extern "C" __global__ void wick_reduce_f32(float* dst, const float* src, i64 nout, i64 n, i64 r,
                                           int op, int nd, WICK_SHAPE, WICK_STRIDES(t)) {
    __shared__ float fbuf[WICK_ROWTHREADS];
    __shared__ double dbuf[WICK_ROWTHREADS];
    const i64 shape[WICK_MAXD] = WICK_ARR(s), st[WICK_MAXD] = WICK_ARR(t);
    for (i64 o = blockIdx.x; o < nout; o += gridDim.x) {
        const float* x = src + wick_offset(o, nd, shape, st);
        float res;
        switch (op) {
        case WICK_RSUM: {
            double acc = 0;
            for (i64 j = threadIdx.x; j < n; j += blockDim.x) acc += (double)x[j * r];
            res = (float)wick_block_sum(acc, dbuf);
            break;
        }
        case WICK_RMAX:
        case WICK_RMIN: {
            float best = op == WICK_RMAX ? -__int_as_float(0x7f800000) : __int_as_float(0x7f800000);
            for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
                float v = x[j * r];
                best = (v != v || best != best) ? wick_nan() : (op == WICK_RMAX ? fmaxf(best, v) : fminf(best, v));
            }
            res = op == WICK_RMAX ? wick_block_max(best, fbuf) : wick_block_min(best, fbuf);
            if (n == 0) res = wick_nan();
            break;
        }
        case WICK_RLOGSUMEXP:
            res = wick_row_logsumexp(x, n, r, fbuf, dbuf);
            break;
        default:
            res = wick_nan();
        }
        if (threadIdx.x == 0) dst[o] = res;
    }
}

// wick_arg_better reports whether candidate (v, j) beats (best, bj) for
// argmax (max != 0) or argmin: a NaN beats any number, a larger (smaller)
// value beats a smaller (larger) one, and on a tie the lower index wins.
// bj < 0 marks an empty candidate.
__device__ __forceinline__ bool wick_arg_better(int max, float v, i64 j, float best, i64 bj) {
    if (j < 0) return false;
    if (bj < 0) return true;
    bool vn = v != v, bn = best != best;
    if (vn || bn) return vn && (!bn || j < bj);
    if (v == best) return j < bj;
    return max ? v > best : v < best;
}

// wick_argreduce_small_f32: dst[o] = index of the first maximum (op ==
// WICK_RARGMAX) or minimum (WICK_RARGMIN) along the reduced dim.
// dst: (nout,) int64. Launch: 1-D grid-stride over outputs.
extern "C" __global__ void wick_argreduce_small_f32(i64* dst, const float* src, i64 nout, i64 n, i64 r,
                                                    int op, int nd, WICK_SHAPE, WICK_STRIDES(t)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), st[WICK_MAXD] = WICK_ARR(t);
    const int max = op == WICK_RARGMAX;
    for (i64 o = wick_tid(); o < nout; o += wick_nthreads()) {
        const float* x = src + wick_offset(o, nd, shape, st);
        float best = n > 0 ? x[0] : 0.0f;
        i64 bi = 0;
        for (i64 j = 1; j < n; ++j) {
            float v = x[j * r];
            if (best != best) break;
            if ((max && (v > best || v != v)) || (!max && (v < best || v != v))) {
                best = v;
                bi = j;
            }
        }
        dst[o] = bi;
    }
}

// wick_argreduce_f32: as wick_argreduce_small_f32 with one block per
// output. Launch: <<<min(nout, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.
extern "C" __global__ void wick_argreduce_f32(i64* dst, const float* src, i64 nout, i64 n, i64 r, int op,
                                              int nd, WICK_SHAPE, WICK_STRIDES(t)) {
    __shared__ float vbuf[WICK_ROWTHREADS];
    __shared__ i64 ibuf[WICK_ROWTHREADS];
    const i64 shape[WICK_MAXD] = WICK_ARR(s), st[WICK_MAXD] = WICK_ARR(t);
    const int max = op == WICK_RARGMAX;
    for (i64 o = blockIdx.x; o < nout; o += gridDim.x) {
        const float* x = src + wick_offset(o, nd, shape, st);
        float best = 0.0f;
        i64 bi = -1;
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
            float v = x[j * r];
            if (wick_arg_better(max, v, j, best, bi)) {
                best = v;
                bi = j;
            }
        }
        vbuf[threadIdx.x] = best;
        ibuf[threadIdx.x] = bi;
        __syncthreads();
        for (int s = WICK_ROWTHREADS / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s &&
                wick_arg_better(max, vbuf[threadIdx.x + s], ibuf[threadIdx.x + s], vbuf[threadIdx.x], ibuf[threadIdx.x])) {
                vbuf[threadIdx.x] = vbuf[threadIdx.x + s];
                ibuf[threadIdx.x] = ibuf[threadIdx.x + s];
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) dst[o] = ibuf[0] < 0 ? 0 : ibuf[0];
        __syncthreads();
    }
}
