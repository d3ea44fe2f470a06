// layernorm.cu: layer normalisation over the last dim, forward and
// backward (like tensor/cpu_nn.go, sums in double).
//
// Forward, per row x of length C:
//   mean = Σx/C, rstd = 1/sqrt(Σ(x-mean)²/C + eps)
//   y = (x - mean)·rstd·w + b          (w, b optional: null pointers)
// Backward, given g = dL/dy, with xhat = (x - mean)·rstd and dh = g·w:
//   dx = rstd·(dh - mean(dh) - xhat·mean(dh·xhat))
//   dw += Σ_rows g·xhat,  db += Σ_rows g
// The backward recomputes each row's mean in double (mu) rather than using
// the saved float mean, whose rounding error dominates x - mean when
// |mean| ≫ std (as the CPU reference does).
//
// Shape legend: x, y, g, dx: (rows, C) contiguous; w, b, dw, db: (C,);
// mean, rstd: (rows,) float; mu: (rows,) double scratch; part:
// (chunks, 2, C) double scratch.

#include "common.cuh"

// wick_layernorm_f32: y, mean, rstd from x, w, b.
// Launch: one block per row, <<<min(rows, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.
extern "C" __global__ void wick_layernorm_f32(float* y, float* mean, float* rstd, const float* x,
                                              const float* w, const float* b, i64 rows, i64 C,
                                              float eps) {
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + r * C;
        float* yr = y + r * C;
        double sum = 0;
        for (i64 j = threadIdx.x; j < C; j += blockDim.x) sum += (double)xr[j];
        double mu = wick_block_sum(sum, dbuf) / (double)C;
        double sq = 0;
        for (i64 j = threadIdx.x; j < C; j += blockDim.x) {
            double d = (double)xr[j] - mu;
            sq += d * d;
        }
        double rs = 1.0 / sqrt(wick_block_sum(sq, dbuf) / (double)C + (double)eps);
        if (threadIdx.x == 0) {
            mean[r] = (float)mu;
            rstd[r] = (float)rs;
        }
        for (i64 j = threadIdx.x; j < C; j += blockDim.x) {
            float v = (float)(((double)xr[j] - mu) * rs);
            if (w) v *= w[j];
            if (b) v += b[j];
            yr[j] = v;
        }
    }
}

// wick_layernorm_mu_f32: mu[r] = the mean of row r of x, in double.
// Launch: one block per row, <<<min(rows, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.
extern "C" __global__ void wick_layernorm_mu_f32(double* mu, const float* x, i64 rows, i64 C) {
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + r * C;
        double sum = 0;
        for (i64 j = threadIdx.x; j < C; j += blockDim.x) sum += (double)xr[j];
        sum = wick_block_sum(sum, dbuf);
        if (threadIdx.x == 0) mu[r] = sum / (double)(C > 0 ? C : 1);
    }
}

// wick_layernorm_dx_f32: dx from g, x, mu, rstd, w (w may be null).
// Launch: one block per row, <<<min(rows, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.
extern "C" __global__ void wick_layernorm_dx_f32(float* dx, const float* g, const float* x,
                                                 const double* mu_, const float* rstd, const float* w,
                                                 i64 rows, i64 C) {
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* gr = g + r * C;
        const float* xr = x + r * C;
        float* dr = dx + r * C;
        double mu = mu_[r], rs = (double)rstd[r];
        double s1 = 0, s2 = 0;
        for (i64 j = threadIdx.x; j < C; j += blockDim.x) {
            double dh = (double)gr[j];
            if (w) dh *= (double)w[j];
            double xh = ((double)xr[j] - mu) * rs;
            s1 += dh;
            s2 += dh * xh;
        }
        s1 = wick_block_sum(s1, dbuf) / (double)C;
        s2 = wick_block_sum(s2, dbuf) / (double)C;
        for (i64 j = threadIdx.x; j < C; j += blockDim.x) {
            double dh = (double)gr[j];
            if (w) dh *= (double)w[j];
            double xh = ((double)xr[j] - mu) * rs;
            dr[j] = (float)(rs * (dh - s1 - xh * s2));
        }
    }
}

// wick_layernorm_dwdb_part_f32: stage 1 of dw, db: part[c][0][j] =
// Σ g·xhat and part[c][1][j] = Σ g over the rows of chunk c (rows
// [c·chunk, (c+1)·chunk)). Launch: <<<(ceil(C/256), chunks), 256>>>, one
// thread per (column, chunk).
extern "C" __global__ void wick_layernorm_dwdb_part_f32(double* part, const float* g, const float* x,
                                                        const double* mu, const float* rstd, i64 rows,
                                                        i64 C, i64 chunk) {
    i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 c = blockIdx.y;
    if (j >= C) return;
    i64 lo = c * chunk, hi = min(rows, lo + chunk);
    double aw = 0, ab = 0;
    for (i64 r = lo; r < hi; ++r) {
        double gv = (double)g[r * C + j];
        aw += gv * ((double)x[r * C + j] - mu[r]) * (double)rstd[r];
        ab += gv;
    }
    part[(c * 2) * C + j] = aw;
    part[(c * 2 + 1) * C + j] = ab;
}

// wick_layernorm_dwdb_sum_f32: stage 2 of dw, db: dw[j] += Σ_c part[c][0][j]
// and db[j] += Σ_c part[c][1][j] (either output may be null).
// Launch: 1-D grid-stride over the C columns.
extern "C" __global__ void wick_layernorm_dwdb_sum_f32(float* dw, float* db, const double* part,
                                                       i64 chunks, i64 C) {
    for (i64 j = wick_tid(); j < C; j += wick_nthreads()) {
        double aw = 0, ab = 0;
        for (i64 c = 0; c < chunks; ++c) {
            aw += part[(c * 2) * C + j];
            ab += part[(c * 2 + 1) * C + j];
        }
        if (dw) dw[j] += (float)aw;
        if (db) db[j] += (float)ab;
    }
}
