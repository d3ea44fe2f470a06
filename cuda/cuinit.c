//go:build cuda

// cuInit, interposed, so that a binary built with the cuda tag starts on a
// machine without a GPU.
//
// gorgonia.org/cu calls cuInit(0) in its package init and calls os.Exit(1)
// when the driver reports an error, such as CUDA_ERROR_NO_DEVICE on a
// machine that has the driver but no GPU. This file defines cuInit in the
// program itself. A definition in the executable is linked statically and
// takes precedence over libcuda.so.1's, so gorgonia's call arrives here:
// the driver's own cuInit (found with dlsym(RTLD_NEXT)) runs once, its
// result is kept for wick_cuinit_result, and CUDA_SUCCESS is returned even
// when it failed, so that the program goes on. Every later driver call then
// fails with CUDA_ERROR_NOT_INITIALIZED, which gorgonia returns as an
// error, and package cuda reports the device as unavailable, naming the
// driver's own error (cuda.go: cuInitError).
//
// With a GPU, the driver's cuInit succeeds and nothing changes. In a Go
// plugin (gophernotes) the same holds as long as the program that loads
// the plugin has not loaded libcuda.so.1 itself: the dynamic loader then
// binds gorgonia's call to the driver before the plugin's own cuInit, and
// gorgonia exits as it would without this file.

#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>

#include "cuinit.h"

typedef CUresult (*wick_cuInit_t)(unsigned int);

static pthread_once_t wick_cuinit_once = PTHREAD_ONCE_INIT;
static int wick_cuinit_status = WICK_CUINIT_MISSING;

// wick_cuinit_inside is set on the thread that runs the driver's cuInit
// for the length of that call. A tool injected into the driver
// (compute-sanitizer, Nsight Systems) may call cuInit by name from inside
// the driver's own cuInit; that call resolves to the cuInit below, and
// entering pthread_once again on the thread that is already inside it
// would wait for itself forever. Such a nested call goes straight to the
// driver instead.
static __thread int wick_cuinit_inside;

static wick_cuInit_t wick_cuinit_next(void) { return (wick_cuInit_t)dlsym(RTLD_NEXT, "cuInit"); }

static void wick_cuinit_real(void) {
	wick_cuInit_t real = wick_cuinit_next();
	if (real == 0) {
		wick_cuinit_status = WICK_CUINIT_MISSING;
		return;
	}
	wick_cuinit_inside = 1;
	wick_cuinit_status = (int)real(0); // flags must be 0: see cuInit
	wick_cuinit_inside = 0;
}

// cuInit is the driver's entry point, interposed: see the top of this file.
CUresult CUDAAPI cuInit(unsigned int flags) {
	if (wick_cuinit_inside) {
		// re-entered from inside the driver's cuInit (see
		// wick_cuinit_inside): forward as is, result included
		wick_cuInit_t real = wick_cuinit_next();
		return real != 0 ? real(flags) : CUDA_ERROR_NOT_INITIALIZED;
	}
	if (flags != 0) {
		return CUDA_ERROR_INVALID_VALUE; // as the driver answers
	}
	pthread_once(&wick_cuinit_once, wick_cuinit_real);
	return CUDA_SUCCESS;
}

// wick_cuinit_result returns the driver's cuInit(0) result (0 is
// CUDA_SUCCESS), or WICK_CUINIT_MISSING when libcuda.so.1 has no cuInit.
int wick_cuinit_result(void) {
	pthread_once(&wick_cuinit_once, wick_cuinit_real);
	return wick_cuinit_status;
}

// wick_cu_error_name returns the driver's name for a CUresult, such as
// "CUDA_ERROR_NO_DEVICE" (cuGetErrorName needs no initialised driver), or
// NULL when the driver does not know the code.
const char *wick_cu_error_name(int code) {
	typedef CUresult (*get_name_t)(CUresult, const char **);
	get_name_t get = (get_name_t)dlsym(RTLD_DEFAULT, "cuGetErrorName");
	const char *name = 0;
	if (get == 0 || get((CUresult)code, &name) != CUDA_SUCCESS) {
		return 0;
	}
	return name;
}
