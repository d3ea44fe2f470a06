// cublas.cpp: an emulated cuBLAS, built as libcublas.so.12 by
// scripts/cuda_emu.sh next to the emulated driver (driver.cpp), with the
// five entry points the cuda package loads with dlsym. Its strided-batched
// sgemm validates its arguments as cuBLAS does (CUBLAS_STATUS_INVALID_VALUE
// for a bad transpose, a negative size or a leading dimension too small),
// checks that every matrix lies inside device memory, reads C only when
// beta is not zero, and in the TF32 math mode truncates the inputs to TF32
// as tensor cores do (they read the top 10 mantissa bits), so that a test's
// TF32 tolerance covers hardware's error (up to 2^-9 relative per product,
// toward zero), not only rounding's (half that).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <vector>

extern "C" int wickemu_inside(unsigned long long p, unsigned long long n);
extern "C" int wickemu_checked(const char* what, void (*f)(void*), void* arg);

namespace {

enum { OK = 0, NOT_INITIALIZED = 1, INVALID_VALUE = 7, EXECUTION_FAILED = 13 };

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
    const float *A, *B;
    float* C;
    int lda, ldb, ldc;
    long long sA, sB, sC;
    int batch;
    bool tf;
};

void run(void* arg) {
    auto& g = *static_cast<Gemm*>(arg);
    // op(A) packed m×k and op(B) packed k×n, column-major, so that the
    // inner loop runs down contiguous columns; each C element sums its k
    // products in order.
    std::vector<float> a((size_t)g.m * g.k), b((size_t)g.k * g.n), col(g.m);
    for (int bt = 0; bt < g.batch; ++bt) {
        const float* A = g.A + bt * g.sA;
        const float* B = g.B + bt * g.sB;
        float* C = g.C + bt * g.sC;
        for (int l = 0; l < g.k; ++l)
            for (int i = 0; i < g.m; ++i) {
                float v = g.ta ? A[l + (long long)i * g.lda] : A[i + (long long)l * g.lda];
                a[i + (size_t)l * g.m] = g.tf ? tf32(v) : v;
            }
        for (int j = 0; j < g.n; ++j)
            for (int l = 0; l < g.k; ++l) {
                float v = g.tb ? B[j + (long long)l * g.ldb] : B[l + (long long)j * g.ldb];
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
                float& c = C[i + (long long)j * g.ldc];
                c = g.beta == 0 ? g.alpha * col[i] : g.alpha * col[i] + g.beta * c;
            }
        }
    }
}

// extent is the number of bytes a column-major rows×cols matrix with
// leading dimension ld spans in each of batch copies stride apart.
unsigned long long extent(int rows, int cols, int ld, long long stride, int batch) {
    if (rows == 0 || cols == 0 || batch == 0) return 0;
    return 4ull * ((unsigned long long)(rows - 1) + (unsigned long long)(cols - 1) * ld +
                   (unsigned long long)(batch - 1) * stride + 1);
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
    if (mode != 0 && mode != 1 && mode != 2 && mode != 3 && mode != 16) return INVALID_VALUE;
    static_cast<Handle*>(h)->mode = mode;
    return OK;
}

int cublasSgemmStridedBatched(void* h, int ta, int tb, int m, int n, int k, const float* alpha, const float* A,
                              int lda, long long sA, const float* B, int ldb, long long sB, const float* beta,
                              float* C, int ldc, long long sC, int batch) {
    if (!h) return NOT_INITIALIZED;
    if (ta < 0 || ta > 2 || tb < 0 || tb > 2 || m < 0 || n < 0 || k < 0 || batch < 0) return INVALID_VALUE;
    ta = ta != 0, tb = tb != 0;
    if (lda < (ta ? (k > 1 ? k : 1) : (m > 1 ? m : 1)) || ldb < (tb ? (n > 1 ? n : 1) : (k > 1 ? k : 1)) ||
        ldc < (m > 1 ? m : 1))
        return INVALID_VALUE;
    if (m == 0 || n == 0 || batch == 0) return OK;
    unsigned long long ea = k ? extent(ta ? k : m, ta ? m : k, lda, sA, batch) : 0;
    unsigned long long eb = k ? extent(tb ? n : k, tb ? k : n, ldb, sB, batch) : 0;
    unsigned long long ec = extent(m, n, ldc, sC, batch);
    if ((ea && !wickemu_inside((uintptr_t)A, ea)) || (eb && !wickemu_inside((uintptr_t)B, eb)) ||
        !wickemu_inside((uintptr_t)C, ec)) {
        fprintf(stderr, "emulated cuBLAS: sgemm m=%d n=%d k=%d lda=%d ldb=%d ldc=%d batch=%d reaches outside device memory\n",
                m, n, k, lda, ldb, ldc, batch);
        return EXECUTION_FAILED;
    }
    Gemm g{ta, tb, m, n, k, *alpha, *beta, A, B, C, lda, ldb, ldc, sA, sB, sC, batch,
           static_cast<Handle*>(h)->mode == 3};
    return wickemu_checked("cublasSgemmStridedBatched", run, &g) ? OK : EXECUTION_FAILED;
}

} // extern "C"
