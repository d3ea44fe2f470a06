//go:build amd64 && !purego

#include "textflag.h"

// func gemv1AVX512(quads, k16 int, x, w *float32, ldw, pf int, out *float32)
//
// out[4q+r] = Σp x[p]·w[(4q+r)·ldw + p] for q < quads, r < 4 and
// p < 16·k16 (quads, k16 ≥ 1): the dot products of one row x with quads
// quadruples of w's rows, each quadruple as dot4x1AVX512 computes it (one
// 16-float load of x feeds four fused multiply-adds, one per row; the
// lanes folded to eight, then added pairwise), so its bits are that
// kernel's. Every step also prefetches the line pf bytes past each of the
// four lines it reads (pf = 16·ldw: the same columns of the next
// quadruple), so that the next rows' lines are on their way while these
// are summed: the rows are short streams (a 576-wide row is 36 lines)
// that the hardware prefetchers start late on.
//
//	SI  x          AX, AX+R8, AX+2·R8, R9   the quadruple's rows
//	R13 the quadruple's first row           R14 4·ldw bytes
//	R11, R12   prefetch pointers (AX+pf, R9+pf)
//	Z0..Z3 the four rows' lanes; Z24 x's lanes; Z15 a spare
TEXT ·gemv1AVX512(SB), NOSPLIT, $0-56
	MOVQ quads+0(FP), DI
	MOVQ k16+8(FP), BX
	MOVQ x+16(FP), R15
	MOVQ w+24(FP), R13
	MOVQ ldw+32(FP), R8
	MOVQ pf+40(FP), R10
	MOVQ out+48(FP), DX
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R14 // 3·ldw bytes
	LEAQ (R14)(R8*1), CX
	MOVQ CX, R14         // 4·ldw bytes

quadloop:
	MOVQ R13, AX
	LEAQ (R13)(R8*2), R9
	ADDQ R8, R9
	LEAQ (AX)(R10*1), R11
	LEAQ (R9)(R10*1), R12
	MOVQ R15, SI
	MOVQ BX, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

dotloop:
	VMOVUPS (SI), Z24
	PREFETCHT0 (R11)
	PREFETCHT0 (R11)(R8*1)
	PREFETCHT0 (R11)(R8*2)
	PREFETCHT0 (R12)
	VFMADD231PS (AX), Z24, Z0
	VFMADD231PS (AX)(R8*1), Z24, Z1
	VFMADD231PS (AX)(R8*2), Z24, Z2
	VFMADD231PS (R9), Z24, Z3
	ADDQ $64, SI
	ADDQ $64, AX
	ADDQ $64, R9
	ADDQ $64, R11
	ADDQ $64, R12
	DECQ CX
	JNZ  dotloop

	VEXTRACTF64X4 $1, Z0, Y15
	VADDPS Y15, Y0, Y0
	VEXTRACTF64X4 $1, Z1, Y15
	VADDPS Y15, Y1, Y1
	VEXTRACTF64X4 $1, Z2, Y15
	VADDPS Y15, Y2, Y2
	VEXTRACTF64X4 $1, Z3, Y15
	VADDPS Y15, Y3, Y3
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X15
	VADDPS X15, X0, X0
	VMOVUPS X0, (DX)
	ADDQ $16, DX
	ADDQ R14, R13
	DECQ DI
	JNZ  quadloop

	VZEROUPPER
	RET

// func gemvBF16AVX512(rows, k32 int, xe, xo *float32, w *uint16, ldw, pf int, c *float32)
//
// c[r] = Σp x[p]·w[r·ldw + p] for r < rows and p < 32·k32 (rows, k32 ≥ 1),
// w bfloat16 and x given as its even (xe) and odd (xo) elements: a 64-byte
// load of a row of w holds 32 bfloat16 values, 16 pairs; shifting each
// pair's dword left by 16 gives the even elements as float32, masking off
// its low half the odd ones (both exact), and each meets its half of x (a
// memory operand: x stays in L1) in a fused multiply-add, the even and
// the odd sums in lanes of their own (Z0, Z4). The odd lanes are then
// added to the even, folded to eight, added pairwise twice and the two
// halves added: per row the sums of gemv1AVX512's quadruples. The rows are
// read one after another, each from its start to its end, so that W
// streams in address order, and every line read prefetches the line pf
// bytes further on (the rows of a quadruple read side by side, four
// streams a row apart, read W 1.2-1.5× slower on Zen 5).
//
//	AX the row's next line; AX+DI, AX+SI the same columns of xe, xo
//	R13 the row's start; R15, R10 xe and xo less R13; R8 ldw bytes
//	R11 pf; BX rows left; R9 k32; DX c
//	Z26, Z27 a line's odd and even elements; Z31 the mask 0xffff0000
TEXT ·gemvBF16AVX512(SB), NOSPLIT, $0-64
	MOVQ rows+0(FP), BX
	MOVQ k32+8(FP), R9
	MOVQ xe+16(FP), R15
	MOVQ xo+24(FP), R10
	MOVQ w+32(FP), R13
	MOVQ ldw+40(FP), R8
	MOVQ pf+48(FP), R11
	MOVQ c+56(FP), DX
	SHLQ $1, R8
	MOVL $0xffff0000, CX
	VPBROADCASTD CX, Z31
	SUBQ R13, R15
	SUBQ R13, R10

brow:
	MOVQ R13, AX
	MOVQ R15, DI
	MOVQ R10, SI
	MOVQ R9, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z4, Z4, Z4

bdot:
	PREFETCHT0 (AX)(R11*1)
	VMOVDQU32 (AX), Z26
	VPSLLD $16, Z26, Z27
	VPANDD Z31, Z26, Z26
	VFMADD231PS (AX)(DI*1), Z27, Z0
	VFMADD231PS (AX)(SI*1), Z26, Z4
	ADDQ $64, AX
	DECQ CX
	JNZ  bdot

	VADDPS Z4, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y15
	VADDPS Y15, Y0, Y0
	VHADDPS Y0, Y0, Y0
	VHADDPS Y0, Y0, Y0
	VEXTRACTF128 $1, Y0, X15
	VADDSS X15, X0, X0
	VMOVSS X0, (DX)
	ADDQ $4, DX
	ADDQ R8, R13
	SUBQ R8, R15
	SUBQ R8, R10
	DECQ BX
	JNZ  brow

	VZEROUPPER
	RET
