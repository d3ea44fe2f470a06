// adamw.cu: one fused AdamW update (PyTorch's rule, like tensor/cpu_nn.go).
//
// With the scalars formed on the host as the CPU reference forms them
// (step = lr/(1-β1^t), bc2 = sqrt(1-β2^t), decay = 1 - lr·wd,
// a1 = 1-β1, a2 = 1-β2), for each element:
//   m ← β1·m + a1·g;  v ← β2·v + a2·g²
//   p ← p·decay - step·m/(sqrt(v)/bc2 + eps)
//
// Shape legend: p, g, m, v: (n,) contiguous.
// Launch: 1-D grid-stride.

#include "common.cuh"

// wick_adamw_f32: updates p, m and v in place from g.
extern "C" __global__ void wick_adamw_f32(float* p, const float* g, float* m, float* v, i64 n, float b1,
                                          float b2, float a1, float a2, float step, float bc2,
                                          float decay, float eps) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        float gv = g[i];
        float mv = m[i] * b1 + gv * a1;
        float vv = v[i] * b2 + gv * gv * a2;
        m[i] = mv;
        v[i] = vv;
        float denom = sqrtf(vv) / bc2 + eps;
        p[i] = p[i] * decay - step * (mv / denom);
    }
}
