//go:build amd64 && !purego

#include "textflag.h"

// Register use of the 12×32 AVX-512 micro-kernel:
//
//	AX, R9, R10, R13  A, rows 0-2, 3-5, 6-8, 9-11 of the current depth step
//	                  (row 3g+i at base g + i·R8)
//	R8   A's row stride in bytes; R11 its column (depth) stride
//	BX   B, the current row of 32 floats; R12 B's row stride in bytes
//	DX   C; SI C's row stride in bytes
//	Z0..Z23   the C tile: row r in Z(2r) (columns 0-15) and Z(2r+1) (16-31)
//	Z24, Z25  the B row; Z26..Z31 broadcast A values

// STEP12 does one depth step: C += A[:, p] ⊗ B[p, :], then moves A and B on.
#define STEP12 \
	STEP12U(0, 0); \
	ADDQ R11, AX; \
	ADDQ R11, R9; \
	ADDQ R11, R10; \
	ADDQ R11, R13; \
	ADDQ R12, BX

// STEP12COLS is STEP12 for an A read in place from a transposed A, where
// each depth step's twelve values lie on one or two new cache lines (csA =
// lda floats on): those 8 steps ahead are fetched first, as the hardware
// prefetchers do not follow that stride (the k = 768 weight gradients 3-7%
// faster; where A is packed the extra loads would cost: hence a kernel of
// its own).
#define STEP12COLS \
	PREFETCHT0 (AX)(R11*8); \
	PREFETCHT0 44(AX)(R11*8); \
	STEP12

// STEP12X4 and STEP12COLSX4 are four of STEP12 and of STEP12COLS.
#define STEP12X4 STEP12; STEP12; STEP12; STEP12
#define STEP12COLSX4 STEP12COLS; STEP12COLS; STEP12COLS; STEP12COLS

// STEP12U(ao, bo) does the products of one depth step, C += A[:, p] ⊗
// B[p, :], with the step's A values at ao bytes from AX, R9, R10 and R13
// (rows 0-2, 3-5, 6-8, 9-11) and its B row at bo bytes from BX, without
// moving them on.
#define STEP12U(ao, bo) \
	VMOVUPS bo(BX), Z24; \
	VMOVUPS bo+64(BX), Z25; \
	VBROADCASTSS ao(AX), Z26; \
	VBROADCASTSS ao(AX)(R8*1), Z27; \
	VBROADCASTSS ao(AX)(R8*2), Z28; \
	VFMADD231PS Z24, Z26, Z0; \
	VFMADD231PS Z25, Z26, Z1; \
	VFMADD231PS Z24, Z27, Z2; \
	VFMADD231PS Z25, Z27, Z3; \
	VFMADD231PS Z24, Z28, Z4; \
	VFMADD231PS Z25, Z28, Z5; \
	VBROADCASTSS ao(R9), Z29; \
	VBROADCASTSS ao(R9)(R8*1), Z30; \
	VBROADCASTSS ao(R9)(R8*2), Z31; \
	VFMADD231PS Z24, Z29, Z6; \
	VFMADD231PS Z25, Z29, Z7; \
	VFMADD231PS Z24, Z30, Z8; \
	VFMADD231PS Z25, Z30, Z9; \
	VFMADD231PS Z24, Z31, Z10; \
	VFMADD231PS Z25, Z31, Z11; \
	VBROADCASTSS ao(R10), Z26; \
	VBROADCASTSS ao(R10)(R8*1), Z27; \
	VBROADCASTSS ao(R10)(R8*2), Z28; \
	VFMADD231PS Z24, Z26, Z12; \
	VFMADD231PS Z25, Z26, Z13; \
	VFMADD231PS Z24, Z27, Z14; \
	VFMADD231PS Z25, Z27, Z15; \
	VFMADD231PS Z24, Z28, Z16; \
	VFMADD231PS Z25, Z28, Z17; \
	VBROADCASTSS ao(R13), Z29; \
	VBROADCASTSS ao(R13)(R8*1), Z30; \
	VBROADCASTSS ao(R13)(R8*2), Z31; \
	VFMADD231PS Z24, Z29, Z18; \
	VFMADD231PS Z25, Z29, Z19; \
	VFMADD231PS Z24, Z30, Z20; \
	VFMADD231PS Z25, Z30, Z21; \
	VFMADD231PS Z24, Z31, Z22; \
	VFMADD231PS Z25, Z31, Z23

// STEP12U4(a1, a2, a3, a4) is four of STEP12 for a packed B panel and A's
// depth steps a1 bytes apart (R11 = a1, R12 = 128; a2 = 2·a1, a3 = 3·a1,
// a4 = 4·a1): at fixed offsets, then one move of A and B, in place of five
// pointer moves per step; the same products in the same order.
#define STEP12U4(a1, a2, a3, a4) \
	STEP12U(0, 0); \
	STEP12U(a1, 128); \
	STEP12U(a2, 256); \
	STEP12U(a3, 384); \
	ADDQ $a4, AX; \
	ADDQ $a4, R9; \
	ADDQ $a4, R10; \
	ADDQ $a4, R13; \
	ADDQ $512, BX

// STEP12UNITX4 and STEP12PACKEDX4 are STEP12U4 for csA = 1 (a
// non-transposed A) and csA = 12 (a packed transposed A).
#define STEP12UNITX4 STEP12U4(4, 8, 12, 16)
#define STEP12PACKEDX4 STEP12U4(48, 96, 144, 192)

// ZERO12 clears the C tile's accumulators.
#define ZERO12 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23

// DEPTH12(STEPM4) runs the first k - k%4 depth steps, four at a time with
// the macro STEPM4 (CX = k on entry), and goes on at the label tail. C's
// rows are fetched during the last 48 of those steps, one row every four
// steps (the tile's 24 lines fall in as few as two L1 sets when C's row
// stride is a multiple of 4 KiB: fetched at the start they would evict B's
// and A's lines from those sets for the whole loop; fetched all at once
// they hold up the loads of A and B); below 48 steps, all at the start.
#define DEPTH12(STEPM4) \
	DEPTH12L(STEPM4, early4, spread, spread4, warm, prefetch, loop4)

// DEPTH12L(STEPM4, E4, S, S4, W, P, L4) is DEPTH12(STEPM4) with its labels
// named by the arguments, so that a kernel can hold more than one.
#define DEPTH12L(STEPM4, E4, S, S4, W, P, L4) \
	SHRQ $2, CX; \
	JZ   W; \
	CMPQ CX, $12; \
	JL   W; \
	SUBQ $12, CX; \
	JZ   S; \
E4: \
	STEPM4; \
	DECQ CX; \
	JNZ  E4; \
S: \
	MOVQ DX, DI; \
	MOVQ $12, R14; \
S4: \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	PREFETCHT0 124(DI); \
	ADDQ SI, DI; \
	STEPM4; \
	DECQ R14; \
	JNZ  S4; \
	JMP  tail; \
W: \
	MOVQ DX, DI; \
	MOVQ $12, R14; \
P: \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	PREFETCHT0 124(DI); \
	ADDQ SI, DI; \
	DECQ R14; \
	JNZ  P; \
	TESTQ CX, CX; \
	JZ   tail; \
L4: \
	STEPM4; \
	DECQ CX; \
	JNZ  L4

// CBASES12 points R9, R10 and R13 at C's rows 3, 6 and 9 (DX at row 0).
#define CBASES12 \
	LEAQ (DX)(SI*2), R9; \
	ADDQ SI, R9; \
	LEAQ (R9)(SI*2), R10; \
	ADDQ SI, R10; \
	LEAQ (R10)(SI*2), R13; \
	ADDQ SI, R13

// ADDC12 adds the C tile in memory to the accumulators.
#define ADDC12 \
	VADDPS (DX), Z0, Z0; \
	VADDPS 64(DX), Z1, Z1; \
	VADDPS (DX)(SI*1), Z2, Z2; \
	VADDPS 64(DX)(SI*1), Z3, Z3; \
	VADDPS (DX)(SI*2), Z4, Z4; \
	VADDPS 64(DX)(SI*2), Z5, Z5; \
	VADDPS (R9), Z6, Z6; \
	VADDPS 64(R9), Z7, Z7; \
	VADDPS (R9)(SI*1), Z8, Z8; \
	VADDPS 64(R9)(SI*1), Z9, Z9; \
	VADDPS (R9)(SI*2), Z10, Z10; \
	VADDPS 64(R9)(SI*2), Z11, Z11; \
	VADDPS (R10), Z12, Z12; \
	VADDPS 64(R10), Z13, Z13; \
	VADDPS (R10)(SI*1), Z14, Z14; \
	VADDPS 64(R10)(SI*1), Z15, Z15; \
	VADDPS (R10)(SI*2), Z16, Z16; \
	VADDPS 64(R10)(SI*2), Z17, Z17; \
	VADDPS (R13), Z18, Z18; \
	VADDPS 64(R13), Z19, Z19; \
	VADDPS (R13)(SI*1), Z20, Z20; \
	VADDPS 64(R13)(SI*1), Z21, Z21; \
	VADDPS (R13)(SI*2), Z22, Z22; \
	VADDPS 64(R13)(SI*2), Z23, Z23

// STOREC12 writes the accumulators to the C tile.
#define STOREC12 \
	VMOVUPS Z0, (DX); \
	VMOVUPS Z1, 64(DX); \
	VMOVUPS Z2, (DX)(SI*1); \
	VMOVUPS Z3, 64(DX)(SI*1); \
	VMOVUPS Z4, (DX)(SI*2); \
	VMOVUPS Z5, 64(DX)(SI*2); \
	VMOVUPS Z6, (R9); \
	VMOVUPS Z7, 64(R9); \
	VMOVUPS Z8, (R9)(SI*1); \
	VMOVUPS Z9, 64(R9)(SI*1); \
	VMOVUPS Z10, (R9)(SI*2); \
	VMOVUPS Z11, 64(R9)(SI*2); \
	VMOVUPS Z12, (R10); \
	VMOVUPS Z13, 64(R10); \
	VMOVUPS Z14, (R10)(SI*1); \
	VMOVUPS Z15, 64(R10)(SI*1); \
	VMOVUPS Z16, (R10)(SI*2); \
	VMOVUPS Z17, 64(R10)(SI*2); \
	VMOVUPS Z18, (R13); \
	VMOVUPS Z19, 64(R13); \
	VMOVUPS Z20, (R13)(SI*1); \
	VMOVUPS Z21, 64(R13)(SI*1); \
	VMOVUPS Z22, (R13)(SI*2); \
	VMOVUPS Z23, 64(R13)(SI*2)

// func sgemmKernel12x32AVX512(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int)
//
// For each tile t < tiles (tiles ≥ 1), with a and c advanced by t·aNext
// floats and 12·t rows: C[r][j] (=|+=) Σp a[r*rsA+p*csA]·b[p*rsB+j] for
// r < 12, j < 32, C's rows ldc floats apart; all strides in floats; k ≥ 1.
//
// Where B is a packed panel (rsB = 32) and A's depth steps lie 1 float
// apart (csA = 1: a non-transposed A, packed or in place) or 12 (a packed
// transposed A), the depth loops read four steps at fixed offsets
// (STEP12U4).
TEXT ·sgemmKernel12x32AVX512(SB), NOSPLIT, $0-88
	MOVQ rsA+24(FP), R8
	MOVQ csA+32(FP), R11
	MOVQ rsB+56(FP), R12
	MOVQ ldc+72(FP), SI
	SHLQ $2, R8
	SHLQ $2, R11
	SHLQ $2, R12
	SHLQ $2, SI

tile:
	MOVQ k+8(FP), CX
	MOVQ a+16(FP), AX
	MOVQ b+48(FP), BX
	MOVQ c+64(FP), DX
	LEAQ (AX)(R8*2), R9
	ADDQ R8, R9
	LEAQ (R9)(R8*2), R10
	ADDQ R8, R10
	LEAQ (R10)(R8*2), R13
	ADDQ R8, R13

	ZERO12
	CMPQ R12, $128
	JNE  strided
	CMPQ R11, $4
	JEQ  unit
	CMPQ R11, $48
	JNE  strided
	DEPTH12L(STEP12PACKEDX4, pearly4, pspread, pspread4, pwarm, pprefetch, ploop4)
	JMP  tail
unit:
	DEPTH12L(STEP12UNITX4, uearly4, uspread, uspread4, uwarm, uprefetch, uloop4)
	JMP  tail
strided:
	DEPTH12(STEP12X4)

tail:
	MOVQ k+8(FP), DI
	ANDQ $3, DI
	JZ   store

loop1:
	STEP12
	DECQ DI
	JNZ  loop1

store:
	CBASES12
	MOVQ acc+80(FP), CX
	TESTQ CX, CX
	JZ   write
	ADDC12

write:
	STOREC12
	// the next tile: A aNext floats on, C 12 rows down
	DECQ tiles+0(FP)
	JZ   done
	MOVQ aNext+40(FP), CX
	SHLQ $2, CX
	ADDQ CX, a+16(FP)
	LEAQ (R13)(SI*2), DX
	ADDQ SI, DX
	MOVQ DX, c+64(FP)
	JMP  tile

done:
	VZEROUPPER
	RET

// func sgemmKernel12x32AVX512Cols(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int)
//
// sgemmKernel12x32AVX512 with STEP12COLS in its depth loops: the same
// contract, for an A read in place from a transposed A.
TEXT ·sgemmKernel12x32AVX512Cols(SB), NOSPLIT, $0-88
	MOVQ rsA+24(FP), R8
	MOVQ csA+32(FP), R11
	MOVQ rsB+56(FP), R12
	MOVQ ldc+72(FP), SI
	SHLQ $2, R8
	SHLQ $2, R11
	SHLQ $2, R12
	SHLQ $2, SI

tile:
	MOVQ k+8(FP), CX
	MOVQ a+16(FP), AX
	MOVQ b+48(FP), BX
	MOVQ c+64(FP), DX
	LEAQ (AX)(R8*2), R9
	ADDQ R8, R9
	LEAQ (R9)(R8*2), R10
	ADDQ R8, R10
	LEAQ (R10)(R8*2), R13
	ADDQ R8, R13

	ZERO12
	DEPTH12(STEP12COLSX4)

tail:
	MOVQ k+8(FP), DI
	ANDQ $3, DI
	JZ   store

loop1:
	STEP12COLS
	DECQ DI
	JNZ  loop1

store:
	CBASES12
	MOVQ acc+80(FP), CX
	TESTQ CX, CX
	JZ   write
	ADDC12

write:
	STOREC12
	// the next tile: A aNext floats on, C 12 rows down
	DECQ tiles+0(FP)
	JZ   done
	MOVQ aNext+40(FP), CX
	SHLQ $2, CX
	ADDQ CX, a+16(FP)
	LEAQ (R13)(SI*2), DX
	ADDQ SI, DX
	MOVQ DX, c+64(FP)
	JMP  tile

done:
	VZEROUPPER
	RET

// STEP4 does one depth step of the 4×32 kernel: rows 0-1 at AX, AX+R8,
// rows 2-3 at R9, R9+R8; C row r in Z(2r), Z(2r+1).
#define STEP4 \
	VMOVUPS (BX), Z24; \
	VMOVUPS 64(BX), Z25; \
	VBROADCASTSS (AX), Z26; \
	VBROADCASTSS (AX)(R8*1), Z27; \
	VBROADCASTSS (R9), Z28; \
	VBROADCASTSS (R9)(R8*1), Z29; \
	VFMADD231PS Z24, Z26, Z0; \
	VFMADD231PS Z25, Z26, Z1; \
	VFMADD231PS Z24, Z27, Z2; \
	VFMADD231PS Z25, Z27, Z3; \
	VFMADD231PS Z24, Z28, Z4; \
	VFMADD231PS Z25, Z28, Z5; \
	VFMADD231PS Z24, Z29, Z6; \
	VFMADD231PS Z25, Z29, Z7; \
	ADDQ R11, AX; \
	ADDQ R11, R9; \
	ADDQ R12, BX

// func sgemmKernel4x32AVX512(panels, k int, a *float32, rsA, csA int, b *float32, rsB, bNext int, c *float32, ldc int, acc int)
//
// The 4×32 edge kernel, with edgeFunc's contract: 4 rows of C across
// panels B panels, for row blocks of fewer than 12 rows.
TEXT ·sgemmKernel4x32AVX512(SB), NOSPLIT, $0-88
	MOVQ rsA+24(FP), R8
	MOVQ csA+32(FP), R11
	MOVQ rsB+48(FP), R12
	MOVQ ldc+72(FP), SI
	SHLQ $2, R8
	SHLQ $2, R11
	SHLQ $2, R12
	SHLQ $2, SI

tile4:
	MOVQ k+8(FP), CX
	MOVQ a+16(FP), AX
	MOVQ b+40(FP), BX
	MOVQ c+64(FP), DX
	LEAQ (AX)(R8*2), R9

	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

	MOVQ CX, DI
	SHRQ $2, CX
	JZ   tail4

loop4x4:
	STEP4
	STEP4
	STEP4
	STEP4
	DECQ CX
	JNZ  loop4x4

tail4:
	ANDQ $3, DI
	JZ   store4

loop4x1:
	STEP4
	DECQ DI
	JNZ  loop4x1

store4:
	// C's row bases: DX for rows 0-1, R9 for rows 2-3
	LEAQ (DX)(SI*2), R9
	MOVQ acc+80(FP), CX
	TESTQ CX, CX
	JZ   write4
	VADDPS (DX), Z0, Z0
	VADDPS 64(DX), Z1, Z1
	VADDPS (DX)(SI*1), Z2, Z2
	VADDPS 64(DX)(SI*1), Z3, Z3
	VADDPS (R9), Z4, Z4
	VADDPS 64(R9), Z5, Z5
	VADDPS (R9)(SI*1), Z6, Z6
	VADDPS 64(R9)(SI*1), Z7, Z7

write4:
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	VMOVUPS Z2, (DX)(SI*1)
	VMOVUPS Z3, 64(DX)(SI*1)
	VMOVUPS Z4, (R9)
	VMOVUPS Z5, 64(R9)
	VMOVUPS Z6, (R9)(SI*1)
	VMOVUPS Z7, 64(R9)(SI*1)
	// the next panel: B bNext floats on, C 32 columns on
	DECQ panels+0(FP)
	JZ   done4
	MOVQ bNext+56(FP), CX
	SHLQ $2, CX
	ADDQ CX, b+40(FP)
	ADDQ $128, c+64(FP)
	JMP  tile4

done4:
	VZEROUPPER
	RET
