//go:build amd64 && !purego

#include "textflag.h"
#include "fold_amd64.h"

// func headDotsAVX512(seq, heads, k16 int, q, k *float32, ldk int, p *float32, ldp int)
//
// For each row i of k and each head h: sixteen lanes of fused
// multiply-adds along the head's 16·k16 columns, folded as gemv1AVX512
// folds a row (to eight, pairwise twice, the two halves), stored at
// p[h·ldp + i]. A row's heads are side by side, so k streams in address
// order.
//
//	AX k's next line; DI q's; R15 p[h·ldp + i]; R13 row i; DX p[i]
//	BX rows left; R10 heads left; CX lines left; R12 heads; R9 k16
//	R8 ldk bytes; R11 ldp bytes; SI q
TEXT ·headDotsAVX512(SB), NOSPLIT, $0-64
	MOVQ seq+0(FP), BX
	MOVQ heads+8(FP), R12
	MOVQ k16+16(FP), R9
	MOVQ q+24(FP), SI
	MOVQ k+32(FP), R13
	MOVQ ldk+40(FP), R8
	MOVQ p+48(FP), DX
	MOVQ ldp+56(FP), R11
	SHLQ $2, R8
	SHLQ $2, R11

drow:
	MOVQ R13, AX
	MOVQ SI, DI
	MOVQ DX, R15
	MOVQ R12, R10

dhead:
	MOVQ R9, CX
	VPXORD Z0, Z0, Z0

ddot:
	VMOVUPS (AX), Z26
	VFMADD231PS (DI), Z26, Z0
	ADDQ $64, AX
	ADDQ $64, DI
	DECQ CX
	JNZ  ddot

	FOLD16
	VMOVSS X0, (R15)
	ADDQ R11, R15
	DECQ R10
	JNZ  dhead

	ADDQ R8, R13
	ADDQ $4, DX
	DECQ BX
	JNZ  drow

	VZEROUPPER
	RET

// func headAxpysAVX512(rows, heads, k16 int, p *float32, ldp int, v *float32, ldv int, acc *float32)
//
// For each row i of v and each head h: s = p[h·ldp + i] broadcast, and
// acc's head h += s·(row i's head h) by fused multiply-adds, sixteen
// columns at a time; acc (heads·16·k16 floats) stays in L1, v streams in
// address order.
//
//	AX v's next line; DI acc's; R15 p[h·ldp + i]; R13 row i; SI p[i]
//	BX rows left; R10 heads left; CX lines left; R12 heads; R9 k16
//	R8 ldp bytes; R11 ldv bytes; DX acc
TEXT ·headAxpysAVX512(SB), NOSPLIT, $0-64
	MOVQ rows+0(FP), BX
	MOVQ heads+8(FP), R12
	MOVQ k16+16(FP), R9
	MOVQ p+24(FP), SI
	MOVQ ldp+32(FP), R8
	MOVQ v+40(FP), R13
	MOVQ ldv+48(FP), R11
	MOVQ acc+56(FP), DX
	SHLQ $2, R8
	SHLQ $2, R11

arow:
	MOVQ R13, AX
	MOVQ DX, DI
	MOVQ SI, R15
	MOVQ R12, R10

ahead:
	VBROADCASTSS (R15), Z1
	MOVQ R9, CX

aline:
	VMOVUPS (DI), Z0
	VFMADD231PS (AX), Z1, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, AX
	ADDQ $64, DI
	DECQ CX
	JNZ  aline

	ADDQ R8, R15
	DECQ R10
	JNZ  ahead

	ADDQ R11, R13
	ADDQ $4, SI
	DECQ BX
	JNZ  arow

	VZEROUPPER
	RET
