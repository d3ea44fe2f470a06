//go:build amd64 && !purego

#include "textflag.h"

// REDUCE16 adds the sixteen lanes of Z halves to halves (8, 4, 2, 1),
// with X1 and Y1 as scratch, and stores the sum at off(DX). Y and X
// name Z's lower halves.
#define REDUCE16(Z, Y, X, off) \
	VEXTRACTF64X4 $1, Z, Y1 ; \
	VADDPS        Y1, Y, Y ; \
	VEXTRACTF128  $1, Y, X1 ; \
	VADDPS        X1, X, X ; \
	VMOVHLPS      X, X, X1 ; \
	VADDPS        X1, X, X ; \
	VPSHUFD       $1, X, X1 ; \
	VADDSS        X1, X, X ; \
	VMOVSS        X, off(DX)

// func dotsAVX512(q *float32, k *float32, ldk int, s int, d16 int, out *float32)
//
// out[p] = q·k[p·ldk : p·ldk+16·d16] for p < s (s ≥ 1, d16 ≥ 1): sixteen
// lanes of fused multiply-adds along the row, then the lanes added
// halves to halves (REDUCE16). Four positions run side by side, each in
// its own register, so a position's sum is the same whichever way it is
// reached.
TEXT ·dotsAVX512(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ k+8(FP), AX
	MOVQ ldk+16(FP), R8
	SHLQ $2, R8
	MOVQ s+24(FP), CX
	MOVQ d16+32(FP), BX
	MOVQ out+40(FP), DX

dotsPos4:
	CMPQ   CX, $4
	JLT    dotsPos1
	VPXORD Z0, Z0, Z0
	VPXORD Z2, Z2, Z2
	VPXORD Z4, Z4, Z4
	VPXORD Z6, Z6, Z6
	MOVQ   SI, R9
	MOVQ   AX, R10
	LEAQ   (R10)(R8*1), R12
	LEAQ   (R12)(R8*1), R13
	LEAQ   (R13)(R8*1), R14
	MOVQ   BX, R11

dotsCol4:
	VMOVUPS     (R9), Z1
	VFMADD231PS (R10), Z1, Z0
	VFMADD231PS (R12), Z1, Z2
	VFMADD231PS (R13), Z1, Z4
	VFMADD231PS (R14), Z1, Z6
	ADDQ        $64, R9
	ADDQ        $64, R10
	ADDQ        $64, R12
	ADDQ        $64, R13
	ADDQ        $64, R14
	DECQ        R11
	JNZ         dotsCol4

	REDUCE16(Z0, Y0, X0, 0)
	REDUCE16(Z2, Y2, X2, 4)
	REDUCE16(Z4, Y4, X4, 8)
	REDUCE16(Z6, Y6, X6, 12)
	ADDQ $16, DX
	LEAQ (AX)(R8*4), AX
	SUBQ $4, CX
	JMP  dotsPos4

dotsPos1:
	TESTQ  CX, CX
	JZ     dotsDone
	VPXORD Z0, Z0, Z0
	MOVQ   SI, R9
	MOVQ   AX, R10
	MOVQ   BX, R11

dotsCol1:
	VMOVUPS     (R9), Z1
	VFMADD231PS (R10), Z1, Z0
	ADDQ        $64, R9
	ADDQ        $64, R10
	DECQ        R11
	JNZ         dotsCol1

	REDUCE16(Z0, Y0, X0, 0)
	ADDQ $4, DX
	ADDQ R8, AX
	DECQ CX
	JMP  dotsPos1

dotsDone:
	VZEROUPPER
	RET

// func axpysAVX512(out *float32, w *float32, v *float32, ldv int, s int, d16 int)
//
// out[0:16·d16] = Σ_p w[p]·v[p·ldv : p·ldv+16·d16] over p < s (s ≥ 1,
// d16 ≥ 1), each element a chain of fused multiply-adds in the order of p.
// Four blocks of sixteen columns run side by side (then two, then one),
// each in its own register, so no element's chain changes.
TEXT ·axpysAVX512(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DX
	MOVQ w+8(FP), SI
	MOVQ v+16(FP), AX
	MOVQ ldv+24(FP), R8
	SHLQ $2, R8
	MOVQ s+32(FP), CX
	MOVQ d16+40(FP), BX

axpysCol4:
	CMPQ   BX, $4
	JLT    axpysCol2
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   SI, R9
	MOVQ   AX, R10
	MOVQ   CX, R11

axpysPos4:
	VBROADCASTSS (R9), Z4
	VFMADD231PS  (R10), Z4, Z0
	VFMADD231PS  64(R10), Z4, Z1
	VFMADD231PS  128(R10), Z4, Z2
	VFMADD231PS  192(R10), Z4, Z3
	ADDQ         $4, R9
	ADDQ         R8, R10
	DECQ         R11
	JNZ          axpysPos4

	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	VMOVUPS Z2, 128(DX)
	VMOVUPS Z3, 192(DX)
	ADDQ    $256, DX
	ADDQ    $256, AX
	SUBQ    $4, BX
	JMP     axpysCol4

axpysCol2:
	CMPQ   BX, $2
	JLT    axpysCol1
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	MOVQ   SI, R9
	MOVQ   AX, R10
	MOVQ   CX, R11

axpysPos2:
	VBROADCASTSS (R9), Z4
	VFMADD231PS  (R10), Z4, Z0
	VFMADD231PS  64(R10), Z4, Z1
	ADDQ         $4, R9
	ADDQ         R8, R10
	DECQ         R11
	JNZ          axpysPos2

	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	ADDQ    $128, DX
	ADDQ    $128, AX
	SUBQ    $2, BX

axpysCol1:
	TESTQ  BX, BX
	JZ     axpysDone
	VPXORD Z0, Z0, Z0
	MOVQ   SI, R9
	MOVQ   AX, R10
	MOVQ   CX, R11

axpysPos1:
	VBROADCASTSS (R9), Z4
	VFMADD231PS  (R10), Z4, Z0
	ADDQ         $4, R9
	ADDQ         R8, R10
	DECQ         R11
	JNZ          axpysPos1

	VMOVUPS Z0, (DX)

axpysDone:
	VZEROUPPER
	RET
