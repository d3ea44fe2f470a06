// elementwise.cu: maps and zips over float32 tensors with broadcasting.
//
// Every tensor.BinaryOp (tensor/backend.go) has its scalar function here,
// and every tensor.UnaryOp in unary_ops.cuh (generated from the op table
// in tensor/unary_ops.go), computed like the CPU reference
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

// wick_unary(op, x, a, b) and wick_unary_grad(op, g, x, y, a, b), and the
// enum of the unary ops, generated from the op table in
// tensor/unary_ops.go.
#include "unary_ops.cuh"

// The enum of the binary ops, wick_compare(op, x, y) and
// wick_binary(op, x, y), generated from the op table in
// tensor/binary_ops.go.
#include "binary_ops.cuh"

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

// wick_where_u16: wick_where_f32 for the bit patterns of a 16-bit float
// dtype (float32 cond).
extern "C" __global__ void wick_where_u16(unsigned short* dst, const float* cond, const unsigned short* x,
                                          const unsigned short* y, i64 n, int nd, WICK_SHAPE, WICK_STRIDES(c),
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

// The 16-bit float dtypes' maps and zips: each element read as float32
// (wick_ld: exact), the float32 op of the kernels above, and one rounding
// to the output's dtype (wick_st), as the CPU reference widens, computes
// and rounds once (tensor/cpu_elementwise.go). Comparisons write float32
// 1 or 0. T is wick_bf16 or wick_f16; the shapes are the float32 kernels'.

template <typename T>
__device__ __forceinline__ void unary16_contig(T* dst, const T* src, i64 n, int op, float a, float b) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) wick_st(dst + i, wick_unary(op, wick_ld(src + i), a, b));
}

template <typename T>
__device__ __forceinline__ void unary16(T* dst, const T* src, i64 n, int op, float a, float b, int nd,
                                        const i64* shape, const i64* st) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads())
        wick_st(dst + i, wick_unary(op, wick_ld(src + wick_offset(i, nd, shape, st)), a, b));
}

template <typename T>
__device__ __forceinline__ void unary16_grad(T* dst, const T* g, const T* x, const T* y, i64 n, int op, float a,
                                             float b) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads())
        wick_st(dst + i, wick_unary_grad(op, wick_ld(g + i), wick_ld(x + i), wick_ld(y + i), a, b));
}

template <typename D, typename T>
__device__ __forceinline__ void binary16_contig(D* dst, const T* x, const T* y, i64 n, int op) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) wick_st(dst + i, wick_binary(op, wick_ld(x + i), wick_ld(y + i)));
}

template <typename D, typename T>
__device__ __forceinline__ void binary16(D* dst, const T* x, const T* y, i64 n, int op, int nd, const i64* shape,
                                         const i64* sp, const i64* sq) {
    for (i64 i = wick_tid(); i < n; i += wick_nthreads()) {
        i64 ox, oy;
        wick_offsets2(i, nd, shape, sp, sq, &ox, &oy);
        wick_st(dst + i, wick_binary(op, wick_ld(x + ox), wick_ld(y + oy)));
    }
}

// WICK_ELEMENTWISE16 defines, for the 16-bit type T with suffix sfx:
// wick_unary_contig_<sfx>, wick_unary_<sfx>, wick_unary_grad_<sfx>,
// wick_binary_contig_<sfx>, wick_binary_<sfx> (T output) and
// wick_compare_contig_<sfx>, wick_compare_<sfx> (float32 1 or 0 output).
#define WICK_ELEMENTWISE16(sfx, T)                                                                            \
    extern "C" __global__ void wick_unary_contig_##sfx(T* dst, const T* src, i64 n, int op, float a,        \
                                                        float b) {                                            \
        unary16_contig<T>(dst, src, n, op, a, b);                                                             \
    }                                                                                                         \
    extern "C" __global__ void wick_unary_##sfx(T* dst, const T* src, i64 n, int op, float a, float b,       \
                                                 int nd, WICK_SHAPE, WICK_STRIDES(t)) {                       \
        const i64 shape[WICK_MAXD] = WICK_ARR(s), st[WICK_MAXD] = WICK_ARR(t);                              \
        unary16<T>(dst, src, n, op, a, b, nd, shape, st);                                                     \
    }                                                                                                         \
    extern "C" __global__ void wick_unary_grad_##sfx(T* dst, const T* g, const T* x, const T* y, i64 n,      \
                                                      int op, float a, float b) {                             \
        unary16_grad<T>(dst, g, x, y, n, op, a, b);                                                           \
    }                                                                                                         \
    extern "C" __global__ void wick_binary_contig_##sfx(T* dst, const T* x, const T* y, i64 n, int op) {     \
        binary16_contig<T, T>(dst, x, y, n, op);                                                              \
    }                                                                                                         \
    extern "C" __global__ void wick_binary_##sfx(T* dst, const T* x, const T* y, i64 n, int op, int nd,      \
                                                  WICK_SHAPE, WICK_STRIDES(p), WICK_STRIDES(q)) {             \
        const i64 shape[WICK_MAXD] = WICK_ARR(s), sp[WICK_MAXD] = WICK_ARR(p), sq[WICK_MAXD] = WICK_ARR(q); \
        binary16<T, T>(dst, x, y, n, op, nd, shape, sp, sq);                                                  \
    }                                                                                                         \
    extern "C" __global__ void wick_compare_contig_##sfx(float* dst, const T* x, const T* y, i64 n, int op) { \
        binary16_contig<float, T>(dst, x, y, n, op);                                                          \
    }                                                                                                         \
    extern "C" __global__ void wick_compare_##sfx(float* dst, const T* x, const T* y, i64 n, int op, int nd, \
                                                   WICK_SHAPE, WICK_STRIDES(p), WICK_STRIDES(q)) {            \
        const i64 shape[WICK_MAXD] = WICK_ARR(s), sp[WICK_MAXD] = WICK_ARR(p), sq[WICK_MAXD] = WICK_ARR(q); \
        binary16<float, T>(dst, x, y, n, op, nd, shape, sp, sq);                                              \
    }

WICK_ELEMENTWISE16(bf16, wick_bf16)
WICK_ELEMENTWISE16(f16, wick_f16)
