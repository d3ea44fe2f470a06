// cublas.cpp: an emulated cuBLAS, built as libcublas.so.12 by
// scripts/cuda_emu.sh next to the emulated driver (driver.cpp), with the
// five entry points the cuda package loads with dlsym. Its strided-batched
// sgemm validates its arguments as cuBLAS does (CUBLAS_STATUS_INVALID_VALUE
// for a bad transpose, a negative size or a leading dimension too small),
// checks that every matrix lies inside device memory, reads C only when
// beta is not zero, and in the TF32 math mode truncates the inputs to TF32
// as tensor cores do (they read the top 10 mantissa bits), so that a test's
// TF32 tolerance covers hardware's error (up to 2^-9 relative per product,
// toward zero), not only rounding's (half that). Its strided-batched GemmEx
// takes bfloat16 or float16 A and B (both of one type) with float32
// compute (CUBLAS_COMPUTE_32F, the only compute type it accepts) and C of
// their type or float32: the products summed in float32, C rounded once to
// nearest even (csrc/half.cuh's conversions), as cuBLAS computes it with
// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, which the cuda package
// sets (without it cuBLAS may sum split-K partials in the output's type;
// the emulation refuses a 16-bit output without the flag).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <vector>

// half.cuh's conversions, compiled for the host
#define __device__
#define __forceinline__ inline
static inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
#include "../../csrc/half.cuh"

extern "C" int wickemu_inside(unsigned long long p, unsigned long long n);
extern "C" int wickemu_checked(const char* what, void (*f)(void*), void* arg);

namespace {

enum { OK = 0, NOT_INITIALIZED = 1, INVALID_VALUE = 7, EXECUTION_FAILED = 13, NOT_SUPPORTED = 15 };

// cudaDataType_t values and CUBLAS_COMPUTE_32F
enum { R32F = 0, R16F = 2, R16BF = 14, COMPUTE_32F = 68 };

int typeSize(int t) { return t == R32F ? 4 : 2; }

float load(const void* p, long long i, int t) {
    switch (t) {
    case R16BF: return wick_bf16_to_f32(static_cast<const unsigned short*>(p)[i]);
    case R16F: return wick_f16_to_f32(static_cast<const unsigned short*>(p)[i]);
    }
    return static_cast<const float*>(p)[i];
}

void store(void* p, long long i, int t, float v) {
    switch (t) {
    case R16BF: static_cast<unsigned short*>(p)[i] = wick_f32_to_bf16(v); return;
    case R16F: static_cast<unsigned short*>(p)[i] = wick_f32_to_f16(v); return;
    }
    static_cast<float*>(p)[i] = v;
}

struct Handle {
    void* stream = nullptr;
    int mode = 0;
};

float tf32(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) u &= ~0x1fffu; // keep 10 mantissa bits, truncating
    memcpy(&x, &u, 4);
    return x;
}

struct Gemm {
    int ta, tb, m, n, k;
    float alpha, beta;
    const void *A, *B;
    void* C;
    int lda, ldb, ldc;
    long long sA, sB, sC;
    int batch;
    bool tf;
    int abType = R32F, cType = R32F;
};

void run(void* arg) {
    auto& g = *static_cast<Gemm*>(arg);
    // op(A) packed m×k and op(B) packed k×n, column-major, so that the
    // inner loop runs down contiguous columns; each C element sums its k
    // products in order.
    std::vector<float> a((size_t)g.m * g.k), b((size_t)g.k * g.n), col(g.m);
    for (int bt = 0; bt < g.batch; ++bt) {
        const long long oA = bt * g.sA, oB = bt * g.sB, oC = bt * g.sC;
        for (int l = 0; l < g.k; ++l)
            for (int i = 0; i < g.m; ++i) {
                float v = load(g.A, oA + (g.ta ? l + (long long)i * g.lda : i + (long long)l * g.lda), g.abType);
                a[i + (size_t)l * g.m] = g.tf ? tf32(v) : v;
            }
        for (int j = 0; j < g.n; ++j)
            for (int l = 0; l < g.k; ++l) {
                float v = load(g.B, oB + (g.tb ? j + (long long)l * g.ldb : l + (long long)j * g.ldb), g.abType);
                b[l + (size_t)j * g.k] = g.tf ? tf32(v) : v;
            }
        for (int j = 0; j < g.n; ++j) {
            std::fill(col.begin(), col.end(), 0.0f);
            for (int l = 0; l < g.k; ++l) {
                const float bl = b[l + (size_t)j * g.k];
                const float* al = &a[(size_t)l * g.m];
                for (int i = 0; i < g.m; ++i) col[i] += al[i] * bl;
            }
            for (int i = 0; i < g.m; ++i) {
                const long long ci = oC + i + (long long)j * g.ldc;
                store(g.C, ci, g.cType,
                      g.beta == 0 ? g.alpha * col[i] : g.alpha * col[i] + g.beta * load(g.C, ci, g.cType));
            }
        }
    }
}

// extent is the number of bytes a column-major rows×cols matrix with
// leading dimension ld spans in each of batch copies stride apart.
unsigned long long extent(int rows, int cols, int ld, long long stride, int batch, int size = 4) {
    if (rows == 0 || cols == 0 || batch == 0) return 0;
    return (unsigned long long)size * ((unsigned long long)(rows - 1) + (unsigned long long)(cols - 1) * ld +
                   (unsigned long long)(batch - 1) * stride + 1);
}

// gemm validates a strided-batched product as cuBLAS does and runs it.
int gemm(const char* name, void* h, int ta, int tb, int m, int n, int k, float alpha, const void* A, int lda,
         long long sA, const void* B, int ldb, long long sB, float beta, void* C, int ldc, long long sC, int batch,
         int abType, int cType) {
    if (!h) return NOT_INITIALIZED;
    if (ta < 0 || ta > 2 || tb < 0 || tb > 2 || m < 0 || n < 0 || k < 0 || batch < 0) return INVALID_VALUE;
    ta = ta != 0, tb = tb != 0;
    if (lda < (ta ? (k > 1 ? k : 1) : (m > 1 ? m : 1)) || ldb < (tb ? (n > 1 ? n : 1) : (k > 1 ? k : 1)) ||
        ldc < (m > 1 ? m : 1))
        return INVALID_VALUE;
    if (m == 0 || n == 0 || batch == 0) return OK;
    int sab = typeSize(abType), sc = typeSize(cType);
    unsigned long long ea = k ? extent(ta ? k : m, ta ? m : k, lda, sA, batch, sab) : 0;
    unsigned long long eb = k ? extent(tb ? n : k, tb ? k : n, ldb, sB, batch, sab) : 0;
    unsigned long long ec = extent(m, n, ldc, sC, batch, sc);
    if ((ea && !wickemu_inside((uintptr_t)A, ea)) || (eb && !wickemu_inside((uintptr_t)B, eb)) ||
        !wickemu_inside((uintptr_t)C, ec)) {
        fprintf(stderr, "emulated cuBLAS: %s m=%d n=%d k=%d lda=%d ldb=%d ldc=%d batch=%d reaches outside device memory\n",
                name, m, n, k, lda, ldb, ldc, batch);
        return EXECUTION_FAILED;
    }
    Gemm g{ta, tb, m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, sA, sB, sC, batch,
           abType == R32F && (static_cast<Handle*>(h)->mode & ~16) == 3, abType, cType};
    return wickemu_checked(name, run, &g) ? OK : EXECUTION_FAILED;
}

} // namespace

extern "C" {

int cublasCreate_v2(void** h) {
    *h = new Handle;
    return OK;
}

int cublasDestroy_v2(void* h) {
    if (!h) return NOT_INITIALIZED;
    delete static_cast<Handle*>(h);
    return OK;
}

int cublasSetStream_v2(void* h, void* s) {
    if (!h) return NOT_INITIALIZED;
    static_cast<Handle*>(h)->stream = s;
    return OK;
}

int cublasSetMathMode(void* h, int mode) {
    if (!h) return NOT_INITIALIZED;
    // a mode (0 to 3), or CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION
    // (16) beside one
    if ((mode & ~16) < 0 || (mode & ~16) > 3) return INVALID_VALUE;
    static_cast<Handle*>(h)->mode = mode;
    return OK;
}

int cublasSgemmStridedBatched(void* h, int ta, int tb, int m, int n, int k, const float* alpha, const float* A,
                              int lda, long long sA, const float* B, int ldb, long long sB, const float* beta,
                              float* C, int ldc, long long sC, int batch) {
    return gemm("cublasSgemmStridedBatched", h, ta, tb, m, n, k, *alpha, A, lda, sA, B, ldb, sB, *beta, C, ldc, sC,
                batch, R32F, R32F);
}

// cublasGemmStridedBatchedEx: bfloat16 or float16 A and B of one type, C
// of theirs or float32, CUBLAS_COMPUTE_32F (float alpha and beta); the
// algorithm is ignored. Other combinations are refused as unsupported.
int cublasGemmStridedBatchedEx(void* h, int ta, int tb, int m, int n, int k, const void* alpha, const void* A,
                               int aType, int lda, long long sA, const void* B, int bType, int ldb, long long sB,
                               const void* beta, void* C, int cType, int ldc, long long sC, int batch, int compute,
                               int algo) {
    (void)algo;
    if (!h) return NOT_INITIALIZED;
    if (aType != bType || (aType != R16BF && aType != R16F) || (cType != aType && cType != R32F) ||
        compute != COMPUTE_32F) {
        fprintf(stderr, "emulated cuBLAS: cublasGemmStridedBatchedEx with types A %d, B %d, C %d, compute %d is not emulated\n",
                aType, bType, cType, compute);
        return NOT_SUPPORTED;
    }
    // stricter than cuBLAS, which would sum split-K partials in 16 bits:
    // the cuda package's products round once, so it must have asked
    if (cType != R32F && !(static_cast<Handle*>(h)->mode & 16)) {
        fprintf(stderr, "emulated cuBLAS: cublasGemmStridedBatchedEx with a 16-bit output needs "
                        "CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION in the math mode\n");
        return NOT_SUPPORTED;
    }
    return gemm("cublasGemmStridedBatchedEx", h, ta, tb, m, n, k, *static_cast<const float*>(alpha), A, lda, sA, B,
                ldb, sB, *static_cast<const float*>(beta), C, ldc, sC, batch, aType, cType);
}

} // extern "C"
