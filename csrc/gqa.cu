// gqa.cu: the softmax steps of causal grouped-query attention with a query
// offset (tensor.GroupedAttention); the products around them are cuBLAS
// calls (cuda/llama.go), one strided batch over the B·Hkv key/value heads,
// each meeting the g·T query rows of its group of g = H/Hkv query heads.
//
// Forward, on the scores S of one query row r (query i = r mod T, at
// position offset + i, which sees n = min(S, offset + i + 1) keys):
//   P[r, j] = softmax_j(scale·S[r, j]) over j < n, and 0 for j ≥ n
// Backward, given dP = dY·Vᵀ (in place):
//   dS[r, j] = P[r, j]·(dP[r, j] − Σ_k P[r, k]·dP[r, k])·scale for j < n, else 0
// As in attention.cu: scale·S rounded to float first, a row whose maximum
// is not finite not shifted, sums in double.
//
// Shape legend: p, dp: (rows, S) contiguous, rows = B·H·T.
// Launch: one block per row, <<<min(rows, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.

#include "common.cuh"

// wick_gqa_softmax_f32: p (holding the scores) ← the attention weights.
extern "C" __global__ void wick_gqa_softmax_f32(float* p, i64 rows, i64 T, i64 S, i64 offset, float scale) {
    __shared__ float fbuf[WICK_ROWTHREADS];
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        float* pr = p + r * S;
        i64 n = min(S, offset + (r % T) + 1);
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
        for (i64 j = threadIdx.x; j < S; j += blockDim.x) {
            float v = 0.0f;
            if (j < n) v = (float)(exp((double)(pr[j] * scale - m)) * inv);
            pr[j] = v;
        }
    }
}

// wick_gqa_softmax_grad_f32: dp (holding dY·Vᵀ) ← dS, given p.
extern "C" __global__ void wick_gqa_softmax_grad_f32(float* dp, const float* p, i64 rows, i64 T, i64 S,
                                                     i64 offset, float scale) {
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        float* dr = dp + r * S;
        const float* pr = p + r * S;
        i64 n = min(S, offset + (r % T) + 1);
        double dot = 0;
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) dot += (double)pr[j] * (double)dr[j];
        float d = (float)wick_block_sum(dot, dbuf);
        for (i64 j = threadIdx.x; j < S; j += blockDim.x) dr[j] = j < n ? pr[j] * (dr[j] - d) * scale : 0.0f;
    }
}
