// softmax.cu: softmax and log-softmax over the rows of a matrix, forward
// and backward.
//
// Forward, per row x (like tensor/cpu_nn.go):
//   m = max(x) (0 if the row is all -inf), e_j = exp(x_j - m), s = Σ e_j
//   softmax:     y_j = e_j / s
//   log-softmax: y_j = x_j - m - log(s)
// Backward, given y and its gradient g:
//   softmax:     dx_j = y_j (g_j - Σ_k g_k y_k)
//   log-softmax: dx_j = g_j - exp(y_j) Σ_k g_k
// Sums accumulate in double.
//
// Shape legend: x, y, g, dx: (rows, cols) contiguous.
// Launch: one block per row, <<<min(rows, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.

#include "common.cuh"

// wick_softmax_f32: y = softmax(x) (log-softmax when log != 0) per row.
extern "C" __global__ void wick_softmax_f32(float* y, const float* x, i64 rows, i64 cols, int log_) {
    __shared__ float fbuf[WICK_ROWTHREADS];
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        float m = wick_row_max(xr, cols, 1, fbuf);
        if (isinf(m) && m < 0) m = 0.0f;
        double sum = 0;
        for (i64 j = threadIdx.x; j < cols; j += blockDim.x) sum += exp((double)(xr[j] - m));
        sum = wick_block_sum(sum, dbuf);
        if (log_) {
            float ls = (float)log(sum);
            for (i64 j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = xr[j] - m - ls;
        } else {
            double inv = 1.0 / sum;
            for (i64 j = threadIdx.x; j < cols; j += blockDim.x) {
                float e = (float)exp((double)(xr[j] - m));
                yr[j] = (float)((double)e * inv);
            }
        }
    }
}

// wick_softmax_grad_f32: dx = the input gradient of (log-)softmax given its
// output y and output gradient g, per row.
extern "C" __global__ void wick_softmax_grad_f32(float* dx, const float* g, const float* y, i64 rows,
                                                 i64 cols, int log_) {
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* gr = g + r * cols;
        const float* yr = y + r * cols;
        float* dr = dx + r * cols;
        double acc = 0;
        if (log_) {
            for (i64 j = threadIdx.x; j < cols; j += blockDim.x) acc += (double)gr[j];
        } else {
            for (i64 j = threadIdx.x; j < cols; j += blockDim.x) acc += (double)gr[j] * (double)yr[j];
        }
        float a = (float)wick_block_sum(acc, dbuf);
        if (log_) {
            for (i64 j = threadIdx.x; j < cols; j += blockDim.x) dr[j] = gr[j] - (float)exp((double)yr[j]) * a;
        } else {
            for (i64 j = threadIdx.x; j < cols; j += blockDim.x) dr[j] = yr[j] * (gr[j] - a);
        }
    }
}
