//go:build amd64 && !purego

#include "textflag.h"

// The AVX-512 packing of bfloat16 operands for gemmDPBF16 (pack16.go):
// float32 elements rounded to bfloat16 as tensor's cast rounds them (to
// nearest, ties to even, NaN to 0xFFFF, subnormals rounded like any other
// value), pairs of depths interleaved into the words that VDPBF16PS
// multiplies, and pairs gathered out of rows for a transposed operand.

// RNDCONST loads the rounding's constants: Z31 = 0x7FFF, Z30 = 1,
// Z29 = 0x7FFFFFFF (the magnitude), Z28 = 0x007FFFFF (what takes the
// magnitude of a NaN, and of nothing else, to bit 31).
#define RNDCONST \
	MOVL $0x7FFF, R12; \
	VPBROADCASTD R12, Z31; \
	MOVL $1, R12; \
	VPBROADCASTD R12, Z30; \
	MOVL $0x7FFFFFFF, R12; \
	VPBROADCASTD R12, Z29; \
	MOVL $0x007FFFFF, R12; \
	VPBROADCASTD R12, Z28

// RND writes to each dword lane of y the bfloat16 rounding of the float32
// lane of x (in its low half, the high half zero): (x + 0x7FFF + bit 16 of
// x) >> 16, or'ed with 0xFFFF where x is a NaN (|x| > +Inf as integers:
// |x| + 0x007FFFFF reaches bit 31, which an arithmetic shift spreads).
// t is scratch; x, y and t distinct. No mask registers, so that the
// lanes of consecutive RNDs do not wait on one another.
#define RND(x, y, t) \
	VPSRLD $16, x, t; \
	VPANDD Z30, t, t; \
	VPADDD Z31, x, y; \
	VPADDD t, y, y; \
	VPSRLD $16, y, y; \
	VPANDD Z29, x, t; \
	VPADDD Z28, t, t; \
	VPSRAD $31, t, t; \
	VPSRLD $16, t, t; \
	VPORD t, y, y

// func round16AVX512(dst *uint16, dld int, src *float32, sld, rows, n int)
//
// dst[r·dld + i] = the bfloat16 rounding of src[r·sld + i] for r < rows
// and i < n (strides in bytes), 16 at a time, the last few of a row under
// a mask.
TEXT ·round16AVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ dld+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ sld+24(FP), R9
	MOVQ rows+32(FP), DX
	MOVQ n+40(FP), BX
	RNDCONST
	MOVQ BX, CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	TESTQ DX, DX
	JZ   r16done

r16row:
	MOVQ SI, R10
	MOVQ DI, R11
	MOVQ BX, CX

r16loop:
	CMPQ CX, $16
	JLT  r16tail
	VMOVDQU32 (R10), Z0
	RND(Z0, Z1, Z2)
	VPMOVDW Z1, Y1
	VMOVDQU Y1, (R11)
	ADDQ $64, R10
	ADDQ $32, R11
	SUBQ $16, CX
	JMP  r16loop

r16tail:
	TESTQ CX, CX
	JZ   r16next
	VMOVDQU32.Z (R10), K1, Z0
	RND(Z0, Z1, Z2)
	VPMOVDW Z1, K1, (R11)

r16next:
	ADDQ R9, SI
	ADDQ R8, DI
	DECQ DX
	JNZ  r16row

r16done:
	VZEROUPPER
	RET

// func interleaveF16AVX512(dst *uint32, gs int, src *float32, ld, kp int, lanes, store uint32)
//
// For q < kp: the words dst[q·gs/4 + j] = bf16(r0[j]) | bf16(r1[j])<<16
// for the lanes j < 32 set in store, r0 and r1 the float32 rows at
// src + 2q·ld and src + (2q+1)·ld (ld in bytes), read in the lanes set
// in lanes (a subset of store; the other stored lanes get 0).
TEXT ·interleaveF16AVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ gs+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ ld+24(FP), R9
	MOVQ kp+32(FP), CX
	MOVL lanes+40(FP), AX
	MOVL store+44(FP), BX
	RNDCONST
	KMOVW AX, K3
	SHRL $16, AX
	KMOVW AX, K4
	KMOVW BX, K5
	SHRL $16, BX
	KMOVW BX, K6
	LEAQ (SI)(R9*1), R10
	SHLQ $1, R9
	TESTQ CX, CX
	JZ   ifdone
	TESTL BX, BX
	JZ   ifnarrow

ifwide:
	VMOVDQU32.Z (SI), K3, Z0
	VMOVDQU32.Z (R10), K3, Z3
	RND(Z0, Z1, Z2)
	RND(Z3, Z4, Z5)
	VPSLLD $16, Z4, Z4
	VPORD Z4, Z1, Z1
	VMOVDQU32 Z1, K5, (DI)
	VMOVDQU32.Z 64(SI), K4, Z0
	VMOVDQU32.Z 64(R10), K4, Z3
	RND(Z0, Z1, Z2)
	RND(Z3, Z4, Z5)
	VPSLLD $16, Z4, Z4
	VPORD Z4, Z1, Z1
	VMOVDQU32 Z1, K6, 64(DI)
	ADDQ R9, SI
	ADDQ R9, R10
	ADDQ R8, DI
	DECQ CX
	JNZ  ifwide
	JMP  ifdone

ifnarrow:
	VMOVDQU32.Z (SI), K3, Z0
	VMOVDQU32.Z (R10), K3, Z3
	RND(Z0, Z1, Z2)
	RND(Z3, Z4, Z5)
	VPSLLD $16, Z4, Z4
	VPORD Z4, Z1, Z1
	VMOVDQU32 Z1, K5, (DI)
	ADDQ R9, SI
	ADDQ R9, R10
	ADDQ R8, DI
	DECQ CX
	JNZ  ifnarrow

ifdone:
	VZEROUPPER
	RET

// func interleaveH16AVX512(dst *uint32, gs int, src *uint16, ld, kp int, lanes, store uint32)
//
// interleaveF16AVX512 for bfloat16 rows (ld in bytes): the words
// r0[j] | r1[j]<<16, each half widened from 16 bits by VPMOVZXWD.
TEXT ·interleaveH16AVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ gs+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ ld+24(FP), R9
	MOVQ kp+32(FP), CX
	MOVL lanes+40(FP), AX
	MOVL store+44(FP), BX
	KMOVW AX, K3
	SHRL $16, AX
	KMOVW AX, K4
	KMOVW BX, K5
	SHRL $16, BX
	KMOVW BX, K6
	LEAQ (SI)(R9*1), R10
	SHLQ $1, R9
	TESTQ CX, CX
	JZ   ihdone
	TESTL BX, BX
	JZ   ihnarrow

ihwide:
	VPMOVZXWD.Z (SI), K3, Z0
	VPMOVZXWD.Z (R10), K3, Z1
	VPSLLD $16, Z1, Z1
	VPORD Z1, Z0, Z0
	VMOVDQU32 Z0, K5, (DI)
	VPMOVZXWD.Z 32(SI), K4, Z0
	VPMOVZXWD.Z 32(R10), K4, Z1
	VPSLLD $16, Z1, Z1
	VPORD Z1, Z0, Z0
	VMOVDQU32 Z0, K6, 64(DI)
	ADDQ R9, SI
	ADDQ R9, R10
	ADDQ R8, DI
	DECQ CX
	JNZ  ihwide
	JMP  ihdone

ihnarrow:
	VPMOVZXWD.Z (SI), K3, Z0
	VPMOVZXWD.Z (R10), K3, Z1
	VPSLLD $16, Z1, Z1
	VPORD Z1, Z0, Z0
	VMOVDQU32 Z0, K5, (DI)
	ADDQ R9, SI
	ADDQ R9, R10
	ADDQ R8, DI
	DECQ CX
	JNZ  ihnarrow

ihdone:
	VZEROUPPER
	RET

// func gatherPairsAVX512(dst *uint32, gs int, src *uint16, off *[32]int32, kp int, lanes, store uint32)
//
// For q < kp: the words dst[q·gs/4 + j] = the pair of bfloat16 at byte
// src + off[j] + 4q (row j's pair q) for the lanes j set in lanes, 0 in
// the other lanes set in store: one VPGATHERDD per 16 lanes.
TEXT ·gatherPairsAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ gs+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ off+24(FP), DX
	MOVQ kp+32(FP), CX
	MOVL lanes+40(FP), AX
	MOVL store+44(FP), BX
	MOVL AX, R11
	SHRL $16, R11
	KMOVW BX, K5
	SHRL $16, BX
	KMOVW BX, K6
	VMOVDQU32 (DX), Z20
	VMOVDQU32 64(DX), Z21
	TESTQ CX, CX
	JZ   gpdone
	TESTL BX, BX
	JZ   gpnarrow

gpwide:
	KMOVW AX, K1
	VPXORD Z0, Z0, Z0
	VPGATHERDD (SI)(Z20*1), K1, Z0
	VMOVDQU32 Z0, K5, (DI)
	KMOVW R11, K1
	VPXORD Z1, Z1, Z1
	VPGATHERDD (SI)(Z21*1), K1, Z1
	VMOVDQU32 Z1, K6, 64(DI)
	ADDQ $4, SI
	ADDQ R8, DI
	DECQ CX
	JNZ  gpwide
	JMP  gpdone

gpnarrow:
	KMOVW AX, K1
	VPXORD Z0, Z0, Z0
	VPGATHERDD (SI)(Z20*1), K1, Z0
	VMOVDQU32 Z0, K5, (DI)
	ADDQ $4, SI
	ADDQ R8, DI
	DECQ CX
	JNZ  gpnarrow

gpdone:
	VZEROUPPER
	RET

// TPLOAD4 loads four rows ld (BX) apart from R10 into its four registers
// and moves R10 four rows on (R9 = 4·ld, DX = 3·ld).
#define TPLOAD4(z0, z1, z2, z3) \
	VMOVDQU32 (R10), z0         ; \
	VMOVDQU32 (R10)(BX*1), z1   ; \
	VMOVDQU32 (R10)(BX*2), z2   ; \
	VMOVDQU32 (R10)(DX*1), z3   ; \
	ADDQ      R9, R10

// TRANSPOSE16 transposes the 16×16 words of Z0–Z15 (row i in Zi) in
// place, through Z16–Z31: 32-bit unpacks of pairs of rows, 64-bit unpacks
// of those, then two rounds of 128-bit lane shuffles.
#define TRANSPOSE16 \
	VPUNPCKLDQ Z1, Z0, Z16 ; \
	VPUNPCKHDQ Z1, Z0, Z17 ; \
	VPUNPCKLDQ Z3, Z2, Z18 ; \
	VPUNPCKHDQ Z3, Z2, Z19 ; \
	VPUNPCKLDQ Z5, Z4, Z20 ; \
	VPUNPCKHDQ Z5, Z4, Z21 ; \
	VPUNPCKLDQ Z7, Z6, Z22 ; \
	VPUNPCKHDQ Z7, Z6, Z23 ; \
	VPUNPCKLDQ Z9, Z8, Z24 ; \
	VPUNPCKHDQ Z9, Z8, Z25 ; \
	VPUNPCKLDQ Z11, Z10, Z26 ; \
	VPUNPCKHDQ Z11, Z10, Z27 ; \
	VPUNPCKLDQ Z13, Z12, Z28 ; \
	VPUNPCKHDQ Z13, Z12, Z29 ; \
	VPUNPCKLDQ Z15, Z14, Z30 ; \
	VPUNPCKHDQ Z15, Z14, Z31 ; \
	VPUNPCKLQDQ Z18, Z16, Z0 ; \
	VPUNPCKHQDQ Z18, Z16, Z1 ; \
	VPUNPCKLQDQ Z19, Z17, Z2 ; \
	VPUNPCKHQDQ Z19, Z17, Z3 ; \
	VPUNPCKLQDQ Z22, Z20, Z4 ; \
	VPUNPCKHQDQ Z22, Z20, Z5 ; \
	VPUNPCKLQDQ Z23, Z21, Z6 ; \
	VPUNPCKHQDQ Z23, Z21, Z7 ; \
	VPUNPCKLQDQ Z26, Z24, Z8 ; \
	VPUNPCKHQDQ Z26, Z24, Z9 ; \
	VPUNPCKLQDQ Z27, Z25, Z10 ; \
	VPUNPCKHQDQ Z27, Z25, Z11 ; \
	VPUNPCKLQDQ Z30, Z28, Z12 ; \
	VPUNPCKHQDQ Z30, Z28, Z13 ; \
	VPUNPCKLQDQ Z31, Z29, Z14 ; \
	VPUNPCKHQDQ Z31, Z29, Z15 ; \
	VSHUFI32X4 $0x88, Z4, Z0, Z16 ; \
	VSHUFI32X4 $0xDD, Z4, Z0, Z17 ; \
	VSHUFI32X4 $0x88, Z12, Z8, Z18 ; \
	VSHUFI32X4 $0xDD, Z12, Z8, Z19 ; \
	VSHUFI32X4 $0x88, Z5, Z1, Z20 ; \
	VSHUFI32X4 $0xDD, Z5, Z1, Z21 ; \
	VSHUFI32X4 $0x88, Z13, Z9, Z22 ; \
	VSHUFI32X4 $0xDD, Z13, Z9, Z23 ; \
	VSHUFI32X4 $0x88, Z6, Z2, Z24 ; \
	VSHUFI32X4 $0xDD, Z6, Z2, Z25 ; \
	VSHUFI32X4 $0x88, Z14, Z10, Z26 ; \
	VSHUFI32X4 $0xDD, Z14, Z10, Z27 ; \
	VSHUFI32X4 $0x88, Z7, Z3, Z28 ; \
	VSHUFI32X4 $0xDD, Z7, Z3, Z29 ; \
	VSHUFI32X4 $0x88, Z15, Z11, Z30 ; \
	VSHUFI32X4 $0xDD, Z15, Z11, Z31 ; \
	VSHUFI32X4 $0x88, Z18, Z16, Z0 ; \
	VSHUFI32X4 $0xDD, Z18, Z16, Z8 ; \
	VSHUFI32X4 $0x88, Z19, Z17, Z4 ; \
	VSHUFI32X4 $0xDD, Z19, Z17, Z12 ; \
	VSHUFI32X4 $0x88, Z22, Z20, Z1 ; \
	VSHUFI32X4 $0xDD, Z22, Z20, Z9 ; \
	VSHUFI32X4 $0x88, Z23, Z21, Z5 ; \
	VSHUFI32X4 $0xDD, Z23, Z21, Z13 ; \
	VSHUFI32X4 $0x88, Z26, Z24, Z2 ; \
	VSHUFI32X4 $0xDD, Z26, Z24, Z10 ; \
	VSHUFI32X4 $0x88, Z27, Z25, Z6 ; \
	VSHUFI32X4 $0xDD, Z27, Z25, Z14 ; \
	VSHUFI32X4 $0x88, Z30, Z28, Z3 ; \
	VSHUFI32X4 $0xDD, Z30, Z28, Z11 ; \
	VSHUFI32X4 $0x88, Z31, Z29, Z7 ; \
	VSHUFI32X4 $0xDD, Z31, Z29, Z15

// TPHALF transposes the 16 rows from R10 on (ld = BX apart) at the
// block's 16 pairs and stores row j of the result gs (R8) bytes apart
// from R11 on.
#define TPHALF \
	TPLOAD4(Z0, Z1, Z2, Z3) ; \
	TPLOAD4(Z4, Z5, Z6, Z7) ; \
	TPLOAD4(Z8, Z9, Z10, Z11) ; \
	TPLOAD4(Z12, Z13, Z14, Z15) ; \
	TRANSPOSE16 ; \
	VMOVDQU32 Z0, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z1, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z2, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z3, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z4, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z5, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z6, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z7, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z8, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z9, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z10, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z11, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z12, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z13, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z14, (R11) ; \
	ADDQ R8, R11 ; \
	VMOVDQU32 Z15, (R11)

// func transposePairsAVX512(dst *uint32, gs int, src *uint16, ld, blocks int)
//
// For q < 16·blocks and j < 32: the word dst[q·gs/4 + j] = the pair of
// bfloat16 at byte src + j·ld + 4q (row j's pair q), gatherPairsAVX512's
// words for all 32 lanes: per block of 16 pairs, the 64 bytes of each of
// the 32 rows are loaded whole and each half of 16 rows transposed in
// registers, which reads each row's lines in address order instead of
// gathering one word from each of 16 lines per instruction.
//
//	SI the block's first row; R10 the half's next row; R11 its next store
//	DI the block's first group; R15 = 16·gs; CX blocks left
TEXT ·transposePairsAVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ gs+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ ld+24(FP), BX
	MOVQ blocks+32(FP), CX
	LEAQ (BX)(BX*2), DX
	MOVQ BX, R9
	SHLQ $2, R9
	MOVQ R8, R15
	SHLQ $4, R15
	TESTQ CX, CX
	JZ   tpdone

tpblock:
	MOVQ SI, R10
	MOVQ DI, R11
	TPHALF
	LEAQ 64(DI), R11 // R10 is at row 16
	TPHALF
	ADDQ $64, SI
	ADDQ R15, DI
	DECQ CX
	JNZ  tpblock

tpdone:
	VZEROUPPER
	RET
