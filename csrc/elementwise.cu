// elementwise.cu: maps and zips over float32 tensors with broadcasting.
//
// Every tensor.UnaryOp and tensor.BinaryOp (tensor/backend.go) has its
// scalar function here, computed like the CPU reference
// (tensor/cpu_elementwise.go): transcendental functions in double, rounded
// once; plain arithmetic in float. Each op comes as a contiguous kernel (the
// fast path: all operands dense, same shape) and a strided kernel (any
// strides, 0 for broadcast dims, up to WICK_MAXD dims).
//
// Shape legend: n = number of output elements; dst is always contiguous
// (n,); strided inputs are described by the output's shape s and their own
// strides.

#include "common.cuh"

#define WICK_SQRT2_OVER_PI 0.7978845608028654
#define WICK_SQRT2 1.4142135623730951
#define WICK_PI 3.141592653589793

// wick_unary returns op(x) with scalar parameters a and b.
__device__ __forceinline__ float wick_unary(int op, float x, float a, float b) {
    double v = (double)x;
    switch (op) {
    case WICK_NEG: return -x;
    case WICK_EXP: return (float)exp(v);
    case WICK_LOG: return (float)log(v);
    case WICK_SQRT: return (float)sqrt(v);
    case WICK_RSQRT: return (float)(1.0 / sqrt(v));
    case WICK_ABS: return fabsf(x);
    case WICK_TANH: return (float)tanh(v);
    case WICK_SIGMOID: return (float)(1.0 / (1.0 + exp(-v)));
    case WICK_RELU: return x != x ? x : (x > 0.0f ? x : 0.0f);
    case WICK_GELU: return (float)(0.5 * v * (1.0 + erf(v / WICK_SQRT2)));
    case WICK_GELU_TANH: return (float)(0.5 * v * (1.0 + tanh(WICK_SQRT2_OVER_PI * (v + 0.044715 * v * v * v))));
    case WICK_SIN: return (float)sin(v);
    case WICK_COS: return (float)cos(v);
    case WICK_ADD_SCALAR: return x + a;
    case WICK_MUL_SCALAR: return x * a;
    case WICK_DIV_SCALAR: return x / a;
    case WICK_RSUB_SCALAR: return a - x;
    case WICK_POW_SCALAR: return (float)pow(v, (double)a);
    case WICK_CLAMP: return x != x ? x : fminf(fmaxf(x, a), b);
    case WICK_SIGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
    case WICK_SQUARE: return x * x;
    }
    return wick_nan();
}

// wick_unary_grad returns g·op'(x) given x and y = op(x).
__device__ __forceinline__ float wick_unary_grad(int op, float g, float x, float y, float a, float b) {
    double v = (double)x;
    switch (op) {
    case WICK_NEG: return -g;
    case WICK_EXP: return g * y;
    case WICK_LOG: return g / x;
    case WICK_SQRT: return g / (2.0f * y);
    case WICK_RSQRT: return -0.5f * g * y * y * y;
    case WICK_ABS: return x > 0.0f ? g : (x < 0.0f ? -g : 0.0f);
    case WICK_TANH: return g * (1.0f - y * y);
    case WICK_SIGMOID: return g * (1.0f - y) * y;
    case WICK_RELU: return y <= 0.0f ? 0.0f : g; // threshold_backward: a NaN passes the gradient
    case WICK_GELU: {
        double cdf = 0.5 * (1.0 + erf(v / WICK_SQRT2));
        double pdf = exp(-0.5 * v * v) / sqrt(2.0 * WICK_PI);
        return (float)((double)g * (cdf + v * pdf));
    }
    case WICK_GELU_TANH: {
        double inner = WICK_SQRT2_OVER_PI * (v + 0.044715 * v * v * v);
        double t = tanh(inner);
        double dinner = WICK_SQRT2_OVER_PI * (1.0 + 3.0 * 0.044715 * v * v);
        return (float)((double)g * (0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * dinner));
    }
    case WICK_SIN: return g * (float)cos(v);
    case WICK_COS: return -g * (float)sin(v);
    case WICK_ADD_SCALAR: return g;
    case WICK_MUL_SCALAR: return g * a;
    case WICK_DIV_SCALAR: return g / a;
    case WICK_RSUB_SCALAR: return -g;
    case WICK_POW_SCALAR:
        if (a == 0.0f) return 0.0f;
        return (float)((double)g * (double)a * pow(v, (double)a - 1.0));
    case WICK_CLAMP: return (x >= a && x <= b) ? g : 0.0f;
    case WICK_SIGN: return 0.0f;
    case WICK_SQUARE: return 2.0f * x * g;
    }
    return wick_nan();
}

// wick_compare returns the comparison op of x and y (float32 or int64) as
// 1 or 0 (NaN for an op that is not a comparison).
template <typename T>
__device__ __forceinline__ float wick_compare(int op, T x, T y) {
    switch (op) {
    case WICK_EQ: return x == y ? 1.0f : 0.0f;
    case WICK_NE: return x != y ? 1.0f : 0.0f;
    case WICK_LT: return x < y ? 1.0f : 0.0f;
    case WICK_LE: return x <= y ? 1.0f : 0.0f;
    case WICK_GT: return x > y ? 1.0f : 0.0f;
    case WICK_GE: return x >= y ? 1.0f : 0.0f;
    }
    return wick_nan();
}

// wick_binary returns op(x, y); comparisons give 1 or 0.
__device__ __forceinline__ float wick_binary(int op, float x, float y) {
    switch (op) {
    case WICK_ADD: return x + y;
    case WICK_SUB: return x - y;
    case WICK_MUL: return x * y;
    case WICK_DIV: return x / y;
    case WICK_POW: return (float)pow((double)x, (double)y);
    case WICK_MAXIMUM: return (x != x || y != y) ? wick_nan() : fmaxf(x, y);
    case WICK_MINIMUM: return (x != x || y != y) ? wick_nan() : fminf(x, y);
    }
    return wick_compare(op, x, y);
}

// wick_unary_contig_f32: dst[i] = op(src[i]) for i < n.
// dst, src: (n,) contiguous. Launch: 1-D grid-stride.
extern "C" __global__ void wick_unary_contig_f32(float* dst, const float* src, i64 n, int op,
                                                 float a, float b) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) dst[i] = wick_unary(op, src[i], a, b);
}

// wick_unary_f32: dst[i] = op(src at element i of shape s with strides t).
// dst: (n,) contiguous; src: strided view of shape s. Launch: 1-D
// grid-stride.
extern "C" __global__ void wick_unary_f32(float* dst, const float* src, i64 n, int op, float a,
                                          float b, int nd, WICK_SHAPE, WICK_STRIDES(t)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), st[WICK_MAXD] = WICK_ARR(t);
    for (i64 i = wick_tid(); i < n; i += wick_nthreads())
        dst[i] = wick_unary(op, src[wick_offset(i, nd, shape, st)], a, b);
}

// wick_unary_grad_f32: dst[i] = g[i]·op'(x[i]) given y[i] = op(x[i]).
// dst, g, x, y: (n,) contiguous. Launch: 1-D grid-stride.
extern "C" __global__ void wick_unary_grad_f32(float* dst, const float* g, const float* x,
                                               const float* y, i64 n, int op, float a, float b) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads())
        dst[i] = wick_unary_grad(op, g[i], x[i], y[i], a, b);
}

// wick_binary_contig_f32: dst[i] = op(x[i], y[i]).
// dst, x, y: (n,) contiguous. Launch: 1-D grid-stride.
extern "C" __global__ void wick_binary_contig_f32(float* dst, const float* x, const float* y, i64 n,
                                                  int op) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) dst[i] = wick_binary(op, x[i], y[i]);
}

// wick_binary_f32: dst[i] = op(x, y) at element i of the broadcast shape s;
// x has strides p and y strides q (0 on broadcast dims).
// dst: (n,) contiguous. Launch: 1-D grid-stride.
extern "C" __global__ void wick_binary_f32(float* dst, const float* x, const float* y, i64 n, int op,
                                           int nd, WICK_SHAPE, WICK_STRIDES(p), WICK_STRIDES(q)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), sp[WICK_MAXD] = WICK_ARR(p), sq[WICK_MAXD] = WICK_ARR(q);
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        i64 ox, oy;
        wick_offsets2(i, nd, shape, sp, sq, &ox, &oy);
        dst[i] = wick_binary(op, x[ox], y[oy]);
    }
}

// wick_compare_i64: dst[i] = op(x, y) as 1 or 0 for int64 x and y at
// element i of the broadcast shape s (strides p and q).
// dst: (n,) float32 contiguous. Launch: 1-D grid-stride.
extern "C" __global__ void wick_compare_i64(float* dst, const i64* x, const i64* y, i64 n, int op,
                                            int nd, WICK_SHAPE, WICK_STRIDES(p), WICK_STRIDES(q)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), sp[WICK_MAXD] = WICK_ARR(p), sq[WICK_MAXD] = WICK_ARR(q);
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        i64 ox, oy;
        wick_offsets2(i, nd, shape, sp, sq, &ox, &oy);
        dst[i] = wick_compare(op, x[ox], y[oy]);
    }
}

// wick_where_f32: dst[i] = cond != 0 ? x : y at element i of shape s, with
// strides c for cond, p for x and q for y.
// dst: (n,) contiguous. Launch: 1-D grid-stride.
extern "C" __global__ void wick_where_f32(float* dst, const float* cond, const float* x,
                                          const float* y, i64 n, int nd, WICK_SHAPE, WICK_STRIDES(c),
                                          WICK_STRIDES(p), WICK_STRIDES(q)) {
    const i64 shape[WICK_MAXD] = WICK_ARR(s), sc[WICK_MAXD] = WICK_ARR(c);
    const i64 sp[WICK_MAXD] = WICK_ARR(p), sq[WICK_MAXD] = WICK_ARR(q);
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        i64 ox, oy;
        wick_offsets2(i, nd, shape, sp, sq, &ox, &oy);
        i64 oc = wick_offset(i, nd, shape, sc);
        dst[i] = cond[oc] != 0.0f ? x[ox] : y[oy];
    }
}
