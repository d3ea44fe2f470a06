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

// Split reductions: long lines, or lines whose reduced stride is not 1,
// reduced by many blocks in two passes, so that every SM has work and the
// reads are coalesced.
//
// Pass 1, wick_reduce_part_f32: the grid is a tiles × chunks array of
// blocks of WICK_ROWTHREADS threads. A block covers tx consecutive outputs
// (a tile; tx is a power of two dividing WICK_ROWTHREADS) and one chunk of
// `chunk` elements of their reduced dim; its threads form tx columns of
// WICK_ROWTHREADS/tx lanes: thread (lane, col) reads elements lane, lane +
// lanes, ... of the chunk of output tile·tx + col. With tx = 1 a block's
// threads read one line's consecutive elements (reduced stride 1); with
// tx = 32 a warp reads 32 adjacent outputs' elements at once (outputs
// adjacent in memory, reduced stride not 1: a column sum such as a bias
// gradient). The lanes' results are combined in shared memory and written
// to part[c·nout + o] (double: sums, and maxima/minima exactly), with
// pidx[c·nout + o] the index of the chosen element for argmax/argmin.
// Launch: <<<dim3(ceil(nout/tx), chunks), WICK_ROWTHREADS>>>, chunks ≤
// 65535.
//
// Pass 2, wick_reduce_final_f32: dst[o] (or dsti[o] for argmax/argmin)
// combines the chunks' partials of output o in chunk order, so the result
// does not depend on the launch: sums in double, rounded once (the square
// root of the sum when root != 0), NaN propagation for max/min, and for
// argmax/argmin the first extreme. Launch: 1-D grid-stride over outputs.
// LogSumExp is not split.
extern "C" __global__ void wick_reduce_part_f32(double* part, i64* pidx, const float* src, i64 nout, i64 n,
                                                i64 r, int op, i64 chunk, int tx, int nd, WICK_SHAPE,
                                                WICK_STRIDES(t)) {
    __shared__ double dbuf[WICK_ROWTHREADS];
    __shared__ i64 ibuf[WICK_ROWTHREADS];
    const i64 shape[WICK_MAXD] = WICK_ARR(s), st[WICK_MAXD] = WICK_ARR(t);
    const int lanes = WICK_ROWTHREADS / tx;
    const int col = threadIdx.x % tx, lane = threadIdx.x / tx;
    const i64 o = (i64)blockIdx.x * tx + col, c = blockIdx.y;
    const i64 lo = c * chunk, hi = min(n, lo + chunk);
    const bool arg = op == WICK_RARGMAX || op == WICK_RARGMIN;
    const int max = op == WICK_RMAX || op == WICK_RARGMAX;
    double acc = 0;
    float best = max ? -__int_as_float(0x7f800000) : __int_as_float(0x7f800000);
    i64 bi = -1;
    if (o < nout) {
        const float* x = src + wick_offset(o, nd, shape, st);
        for (i64 j = lo + lane; j < hi; j += lanes) {
            float v = x[j * r];
            if (op == WICK_RSUM) {
                acc += (double)v;
            } else if (arg) {
                if (wick_arg_better(max, v, j, best, bi)) {
                    best = v;
                    bi = j;
                }
            } else {
                best = (v != v || best != best) ? wick_nan() : (max ? fmaxf(best, v) : fminf(best, v));
            }
        }
    }
    dbuf[threadIdx.x] = op == WICK_RSUM ? acc : (double)best;
    ibuf[threadIdx.x] = bi;
    __syncthreads();
    for (int s = lanes / 2; s > 0; s >>= 1) {
        if (lane < s) {
            const int a = threadIdx.x, b = threadIdx.x + s * tx;
            if (op == WICK_RSUM) {
                dbuf[a] += dbuf[b];
            } else if (arg) {
                if (wick_arg_better(max, (float)dbuf[b], ibuf[b], (float)dbuf[a], ibuf[a])) {
                    dbuf[a] = dbuf[b];
                    ibuf[a] = ibuf[b];
                }
            } else {
                double va = dbuf[a], vb = dbuf[b];
                dbuf[a] = (va != va || vb != vb) ? (double)wick_nan() : (max ? fmax(va, vb) : fmin(va, vb));
            }
        }
        __syncthreads();
    }
    if (lane == 0 && o < nout) {
        part[c * nout + o] = dbuf[col];
        if (arg) pidx[c * nout + o] = ibuf[col];
    }
}

// wick_reduce_final_f32: pass 2 of the split reductions (see above).
// part, pidx: (chunks, nout); dst or dsti: (nout,).
extern "C" __global__ void wick_reduce_final_f32(float* dst, i64* dsti, const double* part, const i64* pidx,
                                                 i64 nout, i64 chunks, int op, int root) {
    const bool arg = op == WICK_RARGMAX || op == WICK_RARGMIN;
    const int max = op == WICK_RMAX || op == WICK_RARGMAX;
    for (i64 o = wick_tid(); o < nout; o += wick_nthreads()) {
        double acc = part[o];
        i64 bi = arg ? pidx[o] : 0;
        for (i64 c = 1; c < chunks; ++c) {
            double v = part[c * nout + o];
            if (op == WICK_RSUM) {
                acc += v;
            } else if (arg) {
                if (wick_arg_better(max, (float)v, pidx[c * nout + o], (float)acc, bi)) {
                    acc = v;
                    bi = pidx[c * nout + o];
                }
            } else {
                acc = (acc != acc || v != v) ? (double)wick_nan() : (max ? fmax(acc, v) : fmin(acc, v));
            }
        }
        if (arg) {
            dsti[o] = bi < 0 ? 0 : bi;
        } else {
            dst[o] = (float)(root ? sqrt(acc) : acc);
        }
    }
}
