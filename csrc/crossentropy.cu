// crossentropy.cu: cross-entropy of logits against int64 targets, forward
// and backward, fused over the class dim (no softmax tensor is stored).
//
// Per row x with target t (like tensor/cpu_nn.go):
//   loss = logsumexp(x) - x[t]                      (0 when t == ignore)
//   dx_j = scale·exp(x_j - logsumexp(x)) - scale·[j == t]   (0 row when ignored)
// A target outside [0, cols) that is not ignore gives a NaN loss and a NaN
// gradient row (never an out-of-bounds read; the tensor package rejects
// such targets before launching).
//
// Shape legend: logits, dx: (rows, cols) contiguous; targets: (rows,)
// int64; loss: (rows,).
// Launch: one block per row, <<<min(rows, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.

#include "common.cuh"

// wick_crossentropy_f32: loss[r] for each row.
extern "C" __global__ void wick_crossentropy_f32(float* loss, const float* logits, const i64* targets,
                                                 i64 rows, i64 cols, i64 ignore) {
    __shared__ float fbuf[WICK_ROWTHREADS];
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        i64 t = targets[r];
        if (t == ignore) {
            if (threadIdx.x == 0) loss[r] = 0.0f;
            continue;
        }
        const float* xr = logits + r * cols;
        float lse = wick_row_logsumexp(xr, cols, 1, fbuf, dbuf);
        if (threadIdx.x == 0) loss[r] = (t >= 0 && t < cols) ? lse - xr[t] : wick_nan();
    }
}

// wick_crossentropy_grad_f32: dx for each row, scaled by scale.
extern "C" __global__ void wick_crossentropy_grad_f32(float* dx, const float* logits, const i64* targets,
                                                      i64 rows, i64 cols, i64 ignore, float scale) {
    __shared__ float fbuf[WICK_ROWTHREADS];
    __shared__ double dbuf[WICK_ROWTHREADS];
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        i64 t = targets[r];
        float* dr = dx + r * cols;
        if (t == ignore) {
            for (i64 j = threadIdx.x; j < cols; j += blockDim.x) dr[j] = 0.0f;
            continue;
        }
        const float* xr = logits + r * cols;
        bool ok = t >= 0 && t < cols;
        double lse = (double)wick_row_logsumexp(xr, cols, 1, fbuf, dbuf);
        for (i64 j = threadIdx.x; j < cols; j += blockDim.x) {
            float v = (float)exp((double)xr[j] - lse) * scale;
            if (j == t) v -= scale;
            dr[j] = ok ? v : wick_nan();
        }
    }
}
