#include "textflag.h"

// func goroutineKey() uintptr
//
// Returns the runtime's pointer to the running goroutine (g), which the
// runtime keeps in thread-local storage on amd64.
TEXT ·goroutineKey(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
