// rotary.cu: rotary position embeddings with Hugging Face's rotate_half
// convention (tensor.Rotator), like tensor/cpu_fused_llama.go.
//
// For each row of x (a head's D features at one position t) and i < h = D/2:
//   y[i]   = x[i]·cos[t,i]     − x[i+h]·sin[t,i]
//   y[i+h] = x[i+h]·cos[t,i+h] + x[i]·sin[t,i+h]
// and with transpose (the gradient with respect to x):
//   y[i]   = x[i]·cos[t,i]     + x[i+h]·sin[t,i+h]
//   y[i+h] = x[i+h]·cos[t,i+h] − x[i]·sin[t,i]
// Each product is rounded before the sum (-fmad=false), as the composed
// x·cos + rotate_half(x)·sin rounds.
//
// Shape legend: x: (A, H, T, D) with strides (sa, sh, st, 1); y: (A, H, T, D)
// contiguous; cos, sin: (T, D) contiguous.

#include "common.cuh"

// wick_rotary_f32: y from x, cos and sin.
// Launch: 1-D grid-stride over the A·H·T·D/2 pairs.
extern "C" __global__ void wick_rotary_f32(float* y, const float* x, i64 A, i64 H, i64 T, i64 D, i64 sa, i64 sh,
                                           i64 st, const float* cos, const float* sin, int transpose) {
    const i64 h = D / 2;
    const i64 n = A * H * T * h;
    for (i64 k = wick_tid(); k < n; k += wick_nthreads()) {
        i64 i = k % h, row = k / h;
        i64 t = row % T, hd = (row / T) % H, a = row / (T * H);
        const float* xr = x + a * sa + hd * sh + t * st;
        const float* c = cos + t * D;
        const float* s = sin + t * D;
        float x1 = xr[i], x2 = xr[i + h];
        float* yr = y + row * D;
        if (transpose) {
            yr[i] = x1 * c[i] + x2 * s[i + h];
            yr[i + h] = x2 * c[i + h] - x1 * s[i];
        } else {
            yr[i] = x1 * c[i] + (-x2) * s[i];
            yr[i + h] = x2 * c[i + h] + x1 * s[i + h];
        }
    }
}
