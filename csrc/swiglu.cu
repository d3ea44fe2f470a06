// swiglu.cu: the gated activation of the Llama family's MLP (tensor.SwiGLUer),
// like tensor/cpu_fused_llama.go.
//
//   y = gate·σ(gate)·up,  σ(x) = 1/(1 + e⁻ˣ) in double, rounded once
//   dgate = g·up·σ·(1 + gate·(1−σ)),  dup = g·(gate·σ)
//
// Shape legend: every operand (n,) contiguous; dgate, dup may be null.

#include "common.cuh"

__device__ __forceinline__ float wick_sigmoid(float x) { return (float)(1.0 / (1.0 + exp(-(double)x))); }

// wick_swiglu_f32: y from gate and up.
// Launch: 1-D grid-stride over n.
extern "C" __global__ void wick_swiglu_f32(float* y, const float* gate, const float* up, i64 n) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        float x = gate[i];
        y[i] = x * wick_sigmoid(x) * up[i];
    }
}

// wick_swiglu_grad_f32: dgate and dup from g, gate and up.
// Launch: 1-D grid-stride over n.
extern "C" __global__ void wick_swiglu_grad_f32(float* dgate, float* dup, const float* g, const float* gate,
                                                const float* up, i64 n) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        float x = gate[i];
        float s = wick_sigmoid(x);
        if (dgate) dgate[i] = g[i] * up[i] * s * (1.0f + x * (1.0f - s));
        if (dup) dup[i] = g[i] * (x * s);
    }
}
