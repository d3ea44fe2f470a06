//go:build amd64 && !purego

#include "textflag.h"

// func dotsAVX512(q *float32, k *float32, ldk int, s int, d16 int, out *float32)
//
// out[p] = q·k[p·ldk : p·ldk+16·d16] for p < s (s ≥ 1, d16 ≥ 1): sixteen
// lanes of fused multiply-adds along the row, then the lanes added
// halves to halves (8, 4, 2, 1).
TEXT ·dotsAVX512(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ k+8(FP), AX
	MOVQ ldk+16(FP), R8
	SHLQ $2, R8
	MOVQ s+24(FP), CX
	MOVQ d16+32(FP), BX
	MOVQ out+40(FP), DX

dotsPos:
	VPXORD Z0, Z0, Z0
	MOVQ   SI, R9
	MOVQ   AX, R10
	MOVQ   BX, R11

dotsCol:
	VMOVUPS     (R9), Z1
	VFMADD231PS (R10), Z1, Z0
	ADDQ        $64, R9
	ADDQ        $64, R10
	DECQ        R11
	JNZ         dotsCol

	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VMOVHLPS      X0, X0, X1
	VADDPS        X1, X0, X0
	VPSHUFD       $1, X0, X1
	VADDSS        X1, X0, X0
	VMOVSS        X0, (DX)
	ADDQ          $4, DX
	ADDQ          R8, AX
	DECQ          CX
	JNZ           dotsPos
	VZEROUPPER
	RET

// func axpysAVX512(out *float32, w *float32, v *float32, ldv int, s int, d16 int)
//
// out[0:16·d16] = Σ_p w[p]·v[p·ldv : p·ldv+16·d16] over p < s (s ≥ 1,
// d16 ≥ 1), each element a chain of fused multiply-adds in the order of p.
TEXT ·axpysAVX512(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DX
	MOVQ w+8(FP), SI
	MOVQ v+16(FP), AX
	MOVQ ldv+24(FP), R8
	SHLQ $2, R8
	MOVQ s+32(FP), CX
	MOVQ d16+40(FP), BX

axpysCol:
	VPXORD Z0, Z0, Z0
	MOVQ   SI, R9
	MOVQ   AX, R10
	MOVQ   CX, R11

axpysPos:
	VBROADCASTSS (R9), Z1
	VFMADD231PS  (R10), Z1, Z0
	ADDQ         $4, R9
	ADDQ         R8, R10
	DECQ         R11
	JNZ          axpysPos

	VMOVUPS Z0, (DX)
	ADDQ    $64, DX
	ADDQ    $64, AX
	DECQ    BX
	JNZ     axpysCol
	VZEROUPPER
	RET
