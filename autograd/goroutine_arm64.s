#include "textflag.h"

// func goroutineKey() uintptr
//
// Returns the runtime's pointer to the running goroutine, which the
// runtime keeps in register g (R28) on arm64.
TEXT ·goroutineKey(SB), NOSPLIT, $0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET
