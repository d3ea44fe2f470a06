//go:build amd64 && !purego

#include "textflag.h"

// func widen16AVX512(dst *float32, src *uint16, n int)
//
// dst[i] = the float32 value of the bfloat16 pattern src[i] for i < n,
// n a multiple of 64 (≥ 64): each pattern zero-extended to a dword
// (VPMOVZXWD) and shifted to its high half, four vectors of 16 a step.
TEXT ·widen16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $6, CX

w512:
	VPMOVZXWD (SI), Z0
	VPMOVZXWD 32(SI), Z1
	VPMOVZXWD 64(SI), Z2
	VPMOVZXWD 96(SI), Z3
	VPSLLD    $16, Z0, Z0
	VPSLLD    $16, Z1, Z1
	VPSLLD    $16, Z2, Z2
	VPSLLD    $16, Z3, Z3
	VMOVUPS   Z0, (DI)
	VMOVUPS   Z1, 64(DI)
	VMOVUPS   Z2, 128(DI)
	VMOVUPS   Z3, 192(DI)
	ADDQ      $128, SI
	ADDQ      $256, DI
	DECQ      CX
	JNZ       w512
	VZEROUPPER
	RET

// func widen16AVX2(dst *float32, src *uint16, n int)
//
// widen16AVX512 with 8-wide vectors: n a multiple of 32 (≥ 32).
TEXT ·widen16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $5, CX

w256:
	VPMOVZXWD (SI), Y0
	VPMOVZXWD 16(SI), Y1
	VPMOVZXWD 32(SI), Y2
	VPMOVZXWD 48(SI), Y3
	VPSLLD    $16, Y0, Y0
	VPSLLD    $16, Y1, Y1
	VPSLLD    $16, Y2, Y2
	VPSLLD    $16, Y3, Y3
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	VMOVUPS   Y2, 64(DI)
	VMOVUPS   Y3, 96(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	DECQ      CX
	JNZ       w256
	VZEROUPPER
	RET
