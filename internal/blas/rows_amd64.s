//go:build amd64 && !purego

#include "textflag.h"

// func dot4x3AVX2(k8 int, x *float32, ldx int, w *float32, ldw int, out *[12]float32)
//
// dot4AVX2 for three rows of x at once: the dot products of the 8·k8
// floats of each of the three rows at x (ldx floats apart) with the four
// rows at w (ldw floats apart), row i's four in out[4i:4i+4]. Each of the
// twelve sums is accumulated and reduced exactly as dot4AVX2 does it (eight
// lanes of fused multiply-adds, then the same pairwise additions), so each
// row gets dot4AVX2's bits; a row of w is loaded once for the three rows.
//
//	SI, SI+R10, R11   the three rows of x; AX, AX+R8, R9, R9+R8 the rows of w
//	Y(4i+r)           the lanes of x row i times w row r
//	Y12, Y13, Y14     the rows of x; Y15 a row of w
TEXT ·dot4x3AVX2(SB), NOSPLIT, $0-48
	MOVQ k8+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ ldx+16(FP), R10
	MOVQ w+24(FP), AX
	MOVQ ldw+32(FP), R8
	MOVQ out+40(FP), DX
	SHLQ $2, R8
	SHLQ $2, R10
	LEAQ (AX)(R8*2), R9
	LEAQ (SI)(R10*2), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

dot3loop:
	VMOVUPS (SI), Y12
	VMOVUPS (SI)(R10*1), Y13
	VMOVUPS (R11), Y14
	VMOVUPS (AX), Y15
	VFMADD231PS Y15, Y12, Y0
	VFMADD231PS Y15, Y13, Y4
	VFMADD231PS Y15, Y14, Y8
	VMOVUPS (AX)(R8*1), Y15
	VFMADD231PS Y15, Y12, Y1
	VFMADD231PS Y15, Y13, Y5
	VFMADD231PS Y15, Y14, Y9
	VMOVUPS (R9), Y15
	VFMADD231PS Y15, Y12, Y2
	VFMADD231PS Y15, Y13, Y6
	VFMADD231PS Y15, Y14, Y10
	VMOVUPS (R9)(R8*1), Y15
	VFMADD231PS Y15, Y12, Y3
	VFMADD231PS Y15, Y13, Y7
	VFMADD231PS Y15, Y14, Y11
	ADDQ $32, SI
	ADDQ $32, R11
	ADDQ $32, AX
	ADDQ $32, R9
	DECQ CX
	JNZ  dot3loop

	// each row's four sums reduced as dot4AVX2 reduces them
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVUPS X0, (DX)
	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VADDPS X5, X4, X4
	VMOVUPS X4, 16(DX)
	VHADDPS Y9, Y8, Y8
	VHADDPS Y11, Y10, Y10
	VHADDPS Y10, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VMOVUPS X8, 32(DX)
	VZEROUPPER
	RET
