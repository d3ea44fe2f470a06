// rmsnorm.cu: root-mean-square normalisation over the last dim (Hugging
// Face's LlamaRMSNorm), forward and backward, like tensor/cpu_fused_llama.go.
//
// Forward, per row x of length C (the squares rounded to float, summed in
// double; the mean, the sum with eps and the root rounded as the composed
// Square, Mean, AddScalar, Rsqrt round):
//   r = 1/sqrt((float)Σx²/C + eps),  y = w·(x·r)      (w optional: null)
// Backward, given g = dL/dy and the saved r, with dh = g·w:
//   dx = r·dh − x·r³·Σ(dh·x)/C      (in double)
//   dw += Σ_rows g·x·r
//
// Shape legend: x, y, g, dx: (rows, C) contiguous; w, dw: (C,); rstd:
// (rows,); part: (chunks, C) double scratch.

#include "common.cuh"

// wick_rmsnorm_f32: y and rstd from x and w.
// Launch: one block per row, <<<min(rows, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.
extern "C" __global__ void wick_rmsnorm_f32(float* y, float* rstd, const float* x, const float* w, i64 rows,
                                            i64 C, float eps) {
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + r * C;
        float* yr = y + r * C;
        double sum = 0;
        for (i64 j = threadIdx.x; j < C; j += blockDim.x) {
            float v = xr[j];
            sum += (double)(v * v);
        }
        sum = wick_block_sum(sum, dbuf);
        float ms = (float)sum / (float)C;
        float inv = (float)(1.0 / sqrt((double)(ms + eps)));
        if (threadIdx.x == 0) rstd[r] = inv;
        for (i64 j = threadIdx.x; j < C; j += blockDim.x) {
            float v = xr[j] * inv;
            yr[j] = w ? w[j] * v : v;
        }
    }
}

// wick_rmsnorm_dx_f32: dx from g, x, rstd and w (w may be null).
// Launch: one block per row, <<<min(rows, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.
extern "C" __global__ void wick_rmsnorm_dx_f32(float* dx, const float* g, const float* x, const float* rstd,
                                               const float* w, i64 rows, i64 C) {
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* gr = g + r * C;
        const float* xr = x + r * C;
        float* dr = dx + r * C;
        double inv = (double)rstd[r];
        double dot = 0;
        for (i64 j = threadIdx.x; j < C; j += blockDim.x) {
            double dh = (double)gr[j];
            if (w) dh *= (double)w[j];
            dot += dh * (double)xr[j];
        }
        dot = wick_block_sum(dot, dbuf);
        double c = inv * inv * inv * dot / (double)C;
        for (i64 j = threadIdx.x; j < C; j += blockDim.x) {
            double dh = (double)gr[j];
            if (w) dh *= (double)w[j];
            dr[j] = (float)(inv * dh - (double)xr[j] * c);
        }
    }
}

// wick_rmsnorm_dw_part_f32: stage 1 of dw: part[c][j] = Σ g·x·r over the
// rows of chunk c (rows [c·chunk, (c+1)·chunk)).
// Launch: <<<(ceil(C/256), chunks), 256>>>, one thread per (column, chunk).
extern "C" __global__ void wick_rmsnorm_dw_part_f32(double* part, const float* g, const float* x,
                                                    const float* rstd, i64 rows, i64 C, i64 chunk) {
    i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 c = blockIdx.y;
    if (j >= C) return;
    i64 lo = c * chunk, hi = min(rows, lo + chunk);
    double acc = 0;
    for (i64 r = lo; r < hi; ++r) acc += (double)g[r * C + j] * (double)x[r * C + j] * (double)rstd[r];
    part[c * C + j] = acc;
}

// wick_rmsnorm_dw_sum_f32: stage 2 of dw: dw[j] += Σ_c part[c][j].
// Launch: 1-D grid-stride over the C columns.
extern "C" __global__ void wick_rmsnorm_dw_sum_f32(float* dw, const double* part, i64 chunks, i64 C) {
    for (i64 j = wick_tid(); j < C; j += wick_nthreads()) {
        double acc = 0;
        for (i64 c = 0; c < chunks; ++c) acc += part[c * C + j];
        dw[j] += (float)acc;
    }
}
