// attention.cu: the softmax steps of multi-head attention; the products
// around them (S = Q·Kᵀ, Y = P·V and their gradients) are cuBLAS calls
// (cuda/attention.go), one per batch or per head.
//
// Forward, on the scores S of one (batch, head) pair, row i:
//   P[i, j] = softmax_j(scale·S[i, j]) over j < n_i, and 0 for j ≥ n_i,
//   where n_i = i + 1 when causal, else T
// Backward, given dP = dY·Vᵀ (in place):
//   dS[i, j] = P[i, j]·(dP[i, j] − Σ_k P[i, k]·dP[i, k])·scale for j < n_i, else 0
// Like the CPU reference (tensor/cpu_attention.go), scale·S is rounded to
// float first and a row whose maximum is not finite is not shifted; sums
// are in double.
//
// Shape legend: p, dp: (rows, T) contiguous, rows = B·nh·T, so row r is
// query i = r mod T.
// Launch: one block per row, <<<min(rows, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.

#include "common.cuh"

// wick_attn_softmax_f32: p (holding the scores) ← the attention weights.
extern "C" __global__ void wick_attn_softmax_f32(float* p, i64 rows, i64 T, float scale, int causal) {
    __shared__ float fbuf[WICK_ROWTHREADS];
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        float* pr = p + r * T;
        i64 n = causal ? (r % T) + 1 : T;
        float m = -__int_as_float(0x7f800000);
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
            float v = pr[j] * scale;
            m = (v != v || m != m) ? wick_nan() : fmaxf(m, v);
        }
        m = wick_block_max(m, fbuf);
        if (m != m || isinf(m)) m = 0.0f;
        double sum = 0;
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) sum += exp((double)(pr[j] * scale - m));
        sum = wick_block_sum(sum, dbuf);
        double inv = 1.0 / sum;
        for (i64 j = threadIdx.x; j < T; j += blockDim.x) {
            float v = 0.0f;
            if (j < n) v = (float)(exp((double)(pr[j] * scale - m)) * inv);
            pr[j] = v;
        }
    }
}

// wick_attn_softmax_grad_f32: dp (holding dY·Vᵀ) ← dS, given p.
extern "C" __global__ void wick_attn_softmax_grad_f32(float* dp, const float* p, i64 rows, i64 T, float scale,
                                                      int causal) {
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        float* dr = dp + r * T;
        const float* pr = p + r * T;
        i64 n = causal ? (r % T) + 1 : T;
        double dot = 0;
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) dot += (double)pr[j] * (double)dr[j];
        float d = (float)wick_block_sum(dot, dbuf);
        for (i64 j = threadIdx.x; j < T; j += blockDim.x) dr[j] = j < n ? pr[j] * (dr[j] - d) * scale : 0.0f;
    }
}
