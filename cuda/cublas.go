//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>

// cuBLAS is not linked: its entry points are looked up with dlsym and
// called through these pointer types (signatures of the cuBLAS v2 API,
// stable from CUDA 11 to 13; handles and streams are opaque pointers).
typedef int (*wick_cublasCreate_t)(void **handle);
typedef int (*wick_cublasDestroy_t)(void *handle);
typedef int (*wick_cublasSetStream_t)(void *handle, void *stream);
typedef int (*wick_cublasSetMathMode_t)(void *handle, int mode);
typedef int (*wick_cublasSgemmStridedBatched_t)(void *handle, int transa, int transb, int m, int n,
	int k, const float *alpha, const float *A, int lda, long long strideA, const float *B, int ldb,
	long long strideB, const float *beta, float *C, int ldc, long long strideC, int batchCount);
typedef int (*wick_cublasGemmStridedBatchedEx_t)(void *handle, int transa, int transb, int m, int n,
	int k, const void *alpha, const void *A, int Atype, int lda, long long strideA, const void *B,
	int Btype, int ldb, long long strideB, const void *beta, void *C, int Ctype, int ldc,
	long long strideC, int batchCount, int computeType, int algo);

static void *wick_dlopen(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
// wick_dlpath returns the file a handle from dlopen was loaded from.
static const char *wick_dlpath(void *lib) {
	struct link_map *m = 0;
	if (dlinfo(lib, RTLD_DI_LINKMAP, &m) != 0 || m == 0) return 0;
	return m->l_name;
}
static const char *wick_dlerror(void) { return dlerror(); }
static void *wick_dlsym(void *lib, const char *name) { return dlsym(lib, name); }

static int wick_cublas_create(void *fn, uintptr_t *handle) {
	void *h = 0;
	int st = ((wick_cublasCreate_t)fn)(&h);
	*handle = (uintptr_t)h;
	return st;
}
static int wick_cublas_destroy(void *fn, uintptr_t handle) {
	return ((wick_cublasDestroy_t)fn)((void *)handle);
}
static int wick_cublas_set_stream(void *fn, uintptr_t handle, uintptr_t stream) {
	return ((wick_cublasSetStream_t)fn)((void *)handle, (void *)stream);
}
static int wick_cublas_set_math_mode(void *fn, uintptr_t handle, int mode) {
	return ((wick_cublasSetMathMode_t)fn)((void *)handle, mode);
}
static int wick_cublas_sgemm_strided_batched(void *fn, uintptr_t handle, int ta, int tb, int m, int n,
	int k, float alpha, uintptr_t A, int lda, long long sA, uintptr_t B, int ldb, long long sB,
	float beta, uintptr_t C, int ldc, long long sC, int batch) {
	return ((wick_cublasSgemmStridedBatched_t)fn)((void *)handle, ta, tb, m, n, k, &alpha,
		(const float *)A, lda, sA, (const float *)B, ldb, sB, &beta, (float *)C, ldc, sC, batch);
}
// wick_cublas_gemm_ex runs cublasGemmStridedBatchedEx with float32
// scalars (alpha, beta) and compute type ct.
static int wick_cublas_gemm_ex(void *fn, uintptr_t handle, int ta, int tb, int m, int n, int k,
	uintptr_t A, int at, int lda, long long sA, uintptr_t B, int bt, int ldb, long long sB,
	uintptr_t C, int ct, int ldc, long long sC, int batch, int compute) {
	float alpha = 1, beta = 0;
	return ((wick_cublasGemmStridedBatchedEx_t)fn)((void *)handle, ta, tb, m, n, k, &alpha,
		(const void *)A, at, lda, sA, (const void *)B, bt, ldb, sB, &beta, (void *)C, ct, ldc, sC,
		batch, compute, -1);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/wickml/wick/internal/libsearch"
	"github.com/wickml/wick/tensor"
)

// cublasSonames are the names cuBLAS is loaded by, newest first, so that a
// binary built against one toolkit runs with whichever cuBLAS the machine
// has (docs/design.md, rule 3).
var cublasSonames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}

// cublasWheelDirs are where Python's NVIDIA wheels keep cuBLAS, below a
// site-packages (or dist-packages) directory: PyTorch installed with pip
// brings its own CUDA libraries there, and on a machine set up that way it
// may be the only cuBLAS.
var cublasWheelDirs = []string{"nvidia/cublas/lib", "nvidia/cu13/lib", "nvidia/cu12/lib", "torch/lib"}

// cublasCandidates returns what loadCublas tries, in order: $WICK_CUBLAS (a
// file) if set, each soname through the dynamic loader's search
// (LD_LIBRARY_PATH, the ld.so cache), then each soname in the NVIDIA wheel
// directories of the Python installations found (cublasWheelDirs below
// $VIRTUAL_ENV, $CONDA_PREFIX, the directories of $PYTHONPATH, ~/.local,
// /usr/local, /usr and /opt/conda). env and home stand in for os.Getenv and
// the home directory; glob for filepath.Glob.
func cublasCandidates(env func(string) string, home string, glob func(string) ([]string, error)) []string {
	return libsearch.Candidates(libsearch.Lib{
		EnvVar:       "WICK_CUBLAS",
		Sonames:      cublasSonames,
		WheelSonames: cublasSonames[:3],
		WheelDirs:    cublasWheelDirs,
	}, env, home, glob)
}

// cuBLAS constants (cublas_api.h).
const (
	cublasOpN           = 0
	cublasOpT           = 1
	cublasDefaultMath   = 0
	cublasTF32TensorOps = 3
	// cublasNoReducedReduction (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)
	// keeps the partial sums of a 16-bit product (split-K) in the compute
	// type, float32, instead of the output's 16 bits: the product is
	// rounded to bfloat16 or float16 once, as the CPU backend's is.
	cublasNoReducedReduction = 16

	// cudaDataType_t (library_types.h) and cublasComputeType_t
	cudaR32F         = 0
	cudaR16F         = 2
	cudaR16BF        = 14
	cublasCompute32F = 68
)

// cudaDataType returns the cudaDataType_t of a float dtype.
func cudaDataType(dt tensor.DType) C.int {
	switch dt {
	case tensor.BFloat16:
		return cudaR16BF
	case tensor.Float16:
		return cudaR16F
	}
	return cudaR32F
}

// cublas is a loaded cuBLAS library with one handle bound to a stream.
type cublas struct {
	soname                                          string // the name it was opened by
	path                                            string // the file the loader found
	create, destroy, setStream, setMathMode, sgemmB unsafe.Pointer
	gemmExB                                         unsafe.Pointer // cublasGemmStridedBatchedEx
	handle                                          C.uintptr_t
	tf32                                            bool // the math mode currently set
}

// loadCublas opens cuBLAS, creates a handle in the current context and
// binds it to stream.
func loadCublas(stream cu.Stream) (*cublas, error) {
	var lib unsafe.Pointer
	var tried []string
	var soname string
	home, _ := os.UserHomeDir()
	for _, name := range cublasCandidates(os.Getenv, home, filepath.Glob) {
		cname := C.CString(name)
		lib = C.wick_dlopen(cname)
		C.free(unsafe.Pointer(cname))
		if lib != nil {
			soname = name
			break
		}
		tried = append(tried, fmt.Sprintf("%s (%s)", name, C.GoString(C.wick_dlerror())))
	}
	if lib == nil {
		return nil, fmt.Errorf("cannot load cuBLAS; tried %s; install cuBLAS from a CUDA toolkit 11 or later, add its directory to LD_LIBRARY_PATH, or set WICK_CUBLAS to the library file", strings.Join(tried, ", "))
	}
	b := &cublas{soname: soname, path: soname}
	if p := C.wick_dlpath(lib); p != nil && C.GoString(p) != "" {
		b.path = C.GoString(p)
	}
	for _, e := range []struct {
		name string
		fn   *unsafe.Pointer
	}{
		{"cublasCreate_v2", &b.create},
		{"cublasDestroy_v2", &b.destroy},
		{"cublasSetStream_v2", &b.setStream},
		{"cublasSetMathMode", &b.setMathMode},
		{"cublasSgemmStridedBatched", &b.sgemmB},
		{"cublasGemmStridedBatchedEx", &b.gemmExB},
	} {
		cname := C.CString(e.name)
		*e.fn = C.wick_dlsym(lib, cname)
		C.free(unsafe.Pointer(cname))
		if *e.fn == nil {
			return nil, fmt.Errorf("cuBLAS (%s) has no symbol %s", soname, e.name)
		}
	}
	if st := C.wick_cublas_create(b.create, &b.handle); st != 0 {
		return nil, fmt.Errorf("cublasCreate (%s): %w", soname, cublasError(st))
	}
	s := uintptr(unsafe.Pointer(stream.C()))
	if st := C.wick_cublas_set_stream(b.setStream, b.handle, C.uintptr_t(s)); st != 0 {
		return nil, fmt.Errorf("cublasSetStream (%s): %w", soname, cublasError(st))
	}
	if err := b.setTF32(false); err != nil {
		return nil, err
	}
	return b, nil
}

// setTF32 selects TF32 tensor-core math (faster, about 10 mantissa bits of
// product precision) or full float32 math.
func (b *cublas) setTF32(on bool) error {
	mode := C.int(cublasDefaultMath | cublasNoReducedReduction)
	if on {
		mode = cublasTF32TensorOps | cublasNoReducedReduction
	}
	if st := C.wick_cublas_set_math_mode(b.setMathMode, b.handle, mode); st != 0 {
		return fmt.Errorf("cublasSetMathMode: %w", cublasError(st))
	}
	b.tf32 = on
	return nil
}

// sgemm runs cublasSgemmStridedBatched (column-major, like BLAS): for each
// of batch matrices, C = op(A)·op(B) with C m×n.
func (b *cublas) sgemm(transA, transB bool, m, n, k int, A cu.DevicePtr, lda, strideA int, B cu.DevicePtr, ldb, strideB int, Cp cu.DevicePtr, ldc, strideC, batch int) error {
	op := func(t bool) C.int {
		if t {
			return cublasOpT
		}
		return cublasOpN
	}
	st := C.wick_cublas_sgemm_strided_batched(b.sgemmB, b.handle, op(transA), op(transB),
		C.int(m), C.int(n), C.int(k), 1,
		C.uintptr_t(A), C.int(lda), C.longlong(strideA),
		C.uintptr_t(B), C.int(ldb), C.longlong(strideB),
		0, C.uintptr_t(Cp), C.int(ldc), C.longlong(strideC), C.int(batch))
	if st != 0 {
		return fmt.Errorf("cublasSgemmStridedBatched(m=%d n=%d k=%d lda=%d ldb=%d ldc=%d batch=%d): %w", m, n, k, lda, ldb, ldc, batch, cublasError(st))
	}
	return nil
}

// gemmEx runs cublasGemmStridedBatchedEx with float32 compute
// (CUBLAS_COMPUTE_32F: the products of the 16-bit inputs summed in float32,
// the result rounded once to C's type): A and B of dtype ab, C of dtype c.
func (b *cublas) gemmEx(transA, transB bool, m, n, k int, ab tensor.DType, A cu.DevicePtr, lda, strideA int, B cu.DevicePtr, ldb, strideB int, c tensor.DType, Cp cu.DevicePtr, ldc, strideC, batch int) error {
	op := func(t bool) C.int {
		if t {
			return cublasOpT
		}
		return cublasOpN
	}
	st := C.wick_cublas_gemm_ex(b.gemmExB, b.handle, op(transA), op(transB),
		C.int(m), C.int(n), C.int(k),
		C.uintptr_t(A), cudaDataType(ab), C.int(lda), C.longlong(strideA),
		C.uintptr_t(B), cudaDataType(ab), C.int(ldb), C.longlong(strideB),
		C.uintptr_t(Cp), cudaDataType(c), C.int(ldc), C.longlong(strideC), C.int(batch), cublasCompute32F)
	if st != 0 {
		return fmt.Errorf("cublasGemmStridedBatchedEx(%s inputs, %s output, m=%d n=%d k=%d lda=%d ldb=%d ldc=%d batch=%d): %w", ab, c, m, n, k, lda, ldb, ldc, batch, cublasError(st))
	}
	return nil
}

func (b *cublas) close() {
	if b.handle != 0 {
		C.wick_cublas_destroy(b.destroy, b.handle)
		b.handle = 0
	}
}

// cublasError names a cuBLAS status code.
func cublasError(st C.int) error {
	names := map[C.int]string{
		1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
		7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH",
		11: "CUBLAS_STATUS_MAPPING_ERROR", 13: "CUBLAS_STATUS_EXECUTION_FAILED",
		14: "CUBLAS_STATUS_INTERNAL_ERROR", 15: "CUBLAS_STATUS_NOT_SUPPORTED",
		16: "CUBLAS_STATUS_LICENSE_ERROR",
	}
	if s, ok := names[st]; ok {
		return errors.New(s)
	}
	return fmt.Errorf("cuBLAS status %d", int(st))
}
