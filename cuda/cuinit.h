//go:build cuda

// The interposed cuInit's report (cuinit.c), for cuda.go.

#ifndef WICK_CUINIT_H
#define WICK_CUINIT_H

// WICK_CUINIT_MISSING is wick_cuinit_result's answer when dlsym finds no
// cuInit after the program's own (libcuda.so.1 lacks it).
#define WICK_CUINIT_MISSING (-1)

int wick_cuinit_result(void);
const char *wick_cu_error_name(int code);

#endif
