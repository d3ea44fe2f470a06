//go:build amd64 && !purego

#include "textflag.h"
#include "fold_amd64.h"

// func gemv1AVX512(rows, k16 int, x, w *float32, ldw int, out *float32)
//
// out[r] = Σp x[p]·w[r·ldw + p] for r < rows and p < 16·k16 (rows,
// k16 ≥ 1): the dot products of one row x with rows rows of w, each as
// dot4x1AVX512 computes a row (sixteen lanes of fused multiply-adds along
// the depth, folded to eight, then added pairwise), so each has that
// kernel's bits. The rows are read one after another, each from its start
// to its end, so that w streams in address order, one stream the hardware
// prefetchers follow: reading a quadruple's four rows side by side (four
// streams a row apart, a 576-wide row only 36 lines long) streamed at
// 0.53-0.57× the rate on Zen 5, whether or not it prefetched in software
// (BenchmarkGemvStream, docs/journal/2026-12-02-gemv.md). x stays in L1.
//
//	AX the row's next line; AX+DI the same columns of x
//	R13 the row's start; R15 x less R13; R8 ldw bytes
//	BX rows left; R9 k16; DX out; Z0 the row's lanes; Z15 a spare
TEXT ·gemv1AVX512(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), BX
	MOVQ k16+8(FP), R9
	MOVQ x+16(FP), R15
	MOVQ w+24(FP), R13
	MOVQ ldw+32(FP), R8
	MOVQ out+40(FP), DX
	SHLQ $2, R8
	SUBQ R13, R15

frow:
	MOVQ R13, AX
	MOVQ R15, DI
	MOVQ R9, CX
	VPXORD Z0, Z0, Z0

fdot:
	VMOVUPS (AX), Z26
	VFMADD231PS (AX)(DI*1), Z26, Z0
	ADDQ $64, AX
	DECQ CX
	JNZ  fdot

	FOLD16
	VMOVSS X0, (DX)
	ADDQ $4, DX
	ADDQ R8, R13
	SUBQ R8, R15
	DECQ BX
	JNZ  frow

	VZEROUPPER
	RET

// BDOTLINE widens the line at AX (32 bfloat16s) to its even and odd
// elements, adds their products with xe and xo into Z0 and Z4, moves AX
// to the next line and counts CX down (the flags for the loop's JNZ).
#define BDOTLINE \
	VMOVDQU32   (AX), Z26           ; \
	VPSLLD      $16, Z26, Z27       ; \
	VPANDD      Z31, Z26, Z26       ; \
	VFMADD231PS (AX)(DI*1), Z27, Z0 ; \
	VFMADD231PS (AX)(SI*1), Z26, Z4 ; \
	ADDQ        $64, AX             ; \
	DECQ        CX

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
// halves added: per row the sums of gemv1AVX512. The rows are
// read one after another, each from its start to its end, so that W
// streams in address order, and every line read prefetches the line pf
// bytes further on, or none for pf = 0 (the rows of a quadruple read side
// by side, four streams a row apart, read W 1.2-1.5× slower on Zen 5).
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

	TESTQ R11, R11
	JZ    bdotnp

bdot:
	PREFETCHT0 (AX)(R11*1)
	BDOTLINE
	JNZ  bdot
	JMP  bsum

bdotnp: // pf = 0: the same loop without the prefetch
	BDOTLINE
	JNZ  bdotnp

bsum:
	VADDPS Z4, Z0, Z0
	FOLD16
	VMOVSS X0, (DX)
	ADDQ $4, DX
	ADDQ R8, R13
	SUBQ R8, R15
	SUBQ R8, R10
	DECQ BX
	JNZ  brow

	VZEROUPPER
	RET

// func gemv2AVX512(pairs, k16 int, x, w *float32, ldw, off int, out *float32)
//
// gemv1AVX512 on rows r and r+off for r < pairs (pairs, k16 ≥ 1, off ≥
// pairs), the two rows read side by side, line by line: two streams in
// address order, off rows apart, each row's sum in its own register
// (Z0, Z1) with gemv1AVX512's bits (out[r] and out[r+off]). On Zen 5 the
// two streams keep more of W's lines in flight than one: they read W
// 1.01-1.17× faster on one thread, 1.04-1.20× on two (gemvStreams2).
//
//	AX row r's next line; AX+R10 row r+off's; AX+DI the same columns of x
//	R13 row r's start; R15 x less R13; R8 ldw bytes; R10 off rows' bytes
//	R11 off floats' bytes; BX pairs left; R9 k16; DX out
TEXT ·gemv2AVX512(SB), NOSPLIT, $0-56
	MOVQ pairs+0(FP), BX
	MOVQ k16+8(FP), R9
	MOVQ x+16(FP), R15
	MOVQ w+24(FP), R13
	MOVQ ldw+32(FP), R8
	MOVQ off+40(FP), R10
	MOVQ out+48(FP), DX
	SHLQ $2, R8
	MOVQ R10, R11
	SHLQ $2, R11
	IMULQ R8, R10
	SUBQ R13, R15

prow:
	MOVQ R13, AX
	MOVQ R15, DI
	MOVQ R9, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1

pdot:
	VMOVUPS     (AX), Z26
	VMOVUPS     (AX)(R10*1), Z27
	VFMADD231PS (AX)(DI*1), Z26, Z0
	VFMADD231PS (AX)(DI*1), Z27, Z1
	ADDQ        $64, AX
	DECQ        CX
	JNZ         pdot

	FOLD16
	VMOVSS  X0, (DX)
	VMOVAPS Z1, Z0
	FOLD16
	VMOVSS  X0, (DX)(R11*1)
	ADDQ    $4, DX
	ADDQ    R8, R13
	SUBQ    R8, R15
	DECQ    BX
	JNZ     prow

	VZEROUPPER
	RET
