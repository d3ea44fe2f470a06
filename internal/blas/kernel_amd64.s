//go:build amd64 && !purego

#include "textflag.h"

// Register use of the 6×16 micro-kernel:
//
//	AX  A, rows 0-2 of the current depth step (row r at AX + r·R8)
//	R9  A, rows 3-5 (R9 = AX + 3·R8)
//	R8  A's row stride in bytes; R11 its column (depth) stride
//	BX  B, the current row of 16 floats; R12 B's row stride in bytes
//	DX  C; SI C's row stride in bytes; R10 = DX + 3·SI
//	Y0..Y11   the C tile: row r in Y(2r) (columns 0-7) and Y(2r+1) (8-15)
//	Y12, Y13  the B row; Y14, Y15 broadcast A values

// LOADB(bo) loads the row of B at bo bytes from BX into Y12, Y13.
#define LOADB(bo) \
	VMOVUPS bo(BX), Y12; \
	VMOVUPS bo+32(BX), Y13

// FMAS6(ao) does the products of one depth step with the row of B in Y12,
// Y13: C += A[:, p] ⊗ B[p, :], the step's A values at ao bytes from AX and
// R9 (rows 0-2 and 3-5).
#define FMAS6(ao) \
	VBROADCASTSS ao(AX), Y14; \
	VBROADCASTSS ao(AX)(R8*1), Y15; \
	VFMADD231PS Y12, Y14, Y0; \
	VFMADD231PS Y13, Y14, Y1; \
	VFMADD231PS Y12, Y15, Y2; \
	VFMADD231PS Y13, Y15, Y3; \
	VBROADCASTSS ao(AX)(R8*2), Y14; \
	VBROADCASTSS ao(R9), Y15; \
	VFMADD231PS Y12, Y14, Y4; \
	VFMADD231PS Y13, Y14, Y5; \
	VFMADD231PS Y12, Y15, Y6; \
	VFMADD231PS Y13, Y15, Y7; \
	VBROADCASTSS ao(R9)(R8*1), Y14; \
	VBROADCASTSS ao(R9)(R8*2), Y15; \
	VFMADD231PS Y12, Y14, Y8; \
	VFMADD231PS Y13, Y14, Y9; \
	VFMADD231PS Y12, Y15, Y10; \
	VFMADD231PS Y13, Y15, Y11

// NEXT moves A and B on by one depth step.
#define NEXT \
	ADDQ R11, AX; \
	ADDQ R11, R9; \
	ADDQ R12, BX

// STEP does one depth step: C += A[:, p] ⊗ B[p, :], then moves A and B on.
#define STEP \
	LOADB(0); \
	FMAS6(0); \
	NEXT

// STEPPACKB is STEP for a B read in place that is also copied, row by
// row, to the packed panel at DI.
#define STEPPACKB \
	LOADB(0); \
	VMOVUPS Y12, (DI); \
	VMOVUPS Y13, 32(DI); \
	ADDQ $64, DI; \
	FMAS6(0); \
	NEXT

// STEPCOLS is STEP for an A read in place from a transposed A, where each
// depth step's six values lie on a new cache line (csA = lda floats on):
// the lines 8 steps ahead are fetched first, as the hardware prefetchers do
// not follow that stride (the k = 768 weight gradients 3-9% faster, and
// 0-2% slower where A is packed: hence a kernel of its own).
#define STEPCOLS \
	PREFETCHT0 (AX)(R11*8); \
	PREFETCHT0 20(AX)(R11*8); \
	STEP

// STEPCOLSPACKA is STEPCOLS that also copies the step's six A values
// (contiguous: rsA = 1) to the packed panel at DI.
#define STEPCOLSPACKA \
	VMOVUPS (AX), X14; \
	MOVQ 16(AX), R14; \
	VMOVUPS X14, (DI); \
	MOVQ R14, 16(DI); \
	ADDQ $24, DI; \
	STEPCOLS

// TILE6(STEPM) computes one 6×16 tile in the accumulators: it fetches C's
// rows (R10 = C's row 3) while the products run, clears the accumulators
// and runs k depth steps (CX = k) with the step macro STEPM, then goes on
// at the label store.
#define TILE6(STEPM) \
	TILE6INIT; \
	DEPTH6(X4(STEPM), STEPM, loop4, tail, loop1)

// X4(S) is four of S.
#define X4(S) S; S; S; S

// DEPTH6(STEPM4, STEPM, L4, LT, L1) runs k depth steps (CX = k), four at a
// time with the macro STEPM4 and the last k%4 one at a time with STEPM,
// and goes on at the label store; L4, LT and L1 name its labels, so that a
// kernel can hold more than one.
#define DEPTH6(STEPM4, STEPM, L4, LT, L1) \
	MOVQ CX, R13; \
	SHRQ $2, CX; \
	JZ   LT; \
L4: \
	STEPM4; \
	DECQ CX; \
	JNZ  L4; \
LT: \
	ANDQ $3, R13; \
	JZ   store; \
L1: \
	STEPM; \
	DECQ R13; \
	JNZ  L1

// TILE6INIT starts a tile: it fetches C's rows (R10 = C's row 3) while
// the products run and clears the accumulators.
#define TILE6INIT \
	LEAQ (DX)(SI*2), R10; \
	ADDQ SI, R10; \
	PREFETCHT0 (DX); \
	PREFETCHT0 60(DX); \
	PREFETCHT0 (DX)(SI*1); \
	PREFETCHT0 60(DX)(SI*1); \
	PREFETCHT0 (DX)(SI*2); \
	PREFETCHT0 60(DX)(SI*2); \
	PREFETCHT0 (R10); \
	PREFETCHT0 60(R10); \
	PREFETCHT0 (R10)(SI*1); \
	PREFETCHT0 60(R10)(SI*1); \
	PREFETCHT0 (R10)(SI*2); \
	PREFETCHT0 60(R10)(SI*2); \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// STEPU4(a1, a2, a3, a4) is four of STEP for a packed B panel (rsB = 16,
// R12 = 64) and A's depth steps a1 bytes apart (R11 = a1; a2 = 2·a1, a3 =
// 3·a1, a4 = 4·a1): the steps at fixed offsets, then one move of A and B,
// in place of three pointer moves per step; the same products in the same
// order.
#define STEPU4(a1, a2, a3, a4) \
	LOADB(0); \
	FMAS6(0); \
	LOADB(64); \
	FMAS6(a1); \
	LOADB(128); \
	FMAS6(a2); \
	LOADB(192); \
	FMAS6(a3); \
	ADDQ $a4, AX; \
	ADDQ $a4, R9; \
	ADDQ $256, BX

// ADDC6 adds the C tile in memory to the accumulators.
#define ADDC6 \
	VADDPS (DX), Y0, Y0; \
	VADDPS 32(DX), Y1, Y1; \
	VADDPS (DX)(SI*1), Y2, Y2; \
	VADDPS 32(DX)(SI*1), Y3, Y3; \
	VADDPS (DX)(SI*2), Y4, Y4; \
	VADDPS 32(DX)(SI*2), Y5, Y5; \
	VADDPS (R10), Y6, Y6; \
	VADDPS 32(R10), Y7, Y7; \
	VADDPS (R10)(SI*1), Y8, Y8; \
	VADDPS 32(R10)(SI*1), Y9, Y9; \
	VADDPS (R10)(SI*2), Y10, Y10; \
	VADDPS 32(R10)(SI*2), Y11, Y11

// STOREC6 writes the accumulators to the C tile.
#define STOREC6 \
	VMOVUPS Y0, (DX); \
	VMOVUPS Y1, 32(DX); \
	VMOVUPS Y2, (DX)(SI*1); \
	VMOVUPS Y3, 32(DX)(SI*1); \
	VMOVUPS Y4, (DX)(SI*2); \
	VMOVUPS Y5, 32(DX)(SI*2); \
	VMOVUPS Y6, (R10); \
	VMOVUPS Y7, 32(R10); \
	VMOVUPS Y8, (R10)(SI*1); \
	VMOVUPS Y9, 32(R10)(SI*1); \
	VMOVUPS Y10, (R10)(SI*2); \
	VMOVUPS Y11, 32(R10)(SI*2)

// func sgemmKernel6x16AVX2(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int)
//
// For each tile t < tiles (tiles ≥ 1), with a and c advanced by t·aNext
// floats and 6·t rows: C[r][j] (=|+=) Σp a[r*rsA+p*csA]·b[p*rsB+j] for
// r < 6, j < 16, C's rows ldc floats apart; all strides in floats; k ≥ 1.
//
// Where B is a packed panel (rsB = 16) and A's depth steps lie 1 float
// apart (csA = 1: a non-transposed A, packed or in place) or 6 (a packed
// transposed A), the depth loop reads four steps at fixed offsets
// (STEPU4).
TEXT ·sgemmKernel6x16AVX2(SB), NOSPLIT, $0-88
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

	TILE6INIT
	CMPQ R12, $64
	JNE  strided
	CMPQ R11, $4
	JEQ  unit
	CMPQ R11, $24
	JNE  strided
	DEPTH6(STEPU4(24, 48, 72, 96), STEP, ploop4, ptail, ploop1)
	JMP  store
unit:
	DEPTH6(STEPU4(4, 8, 12, 16), STEP, uloop4, utail, uloop1)
	JMP  store
strided:
	DEPTH6(X4(STEP), STEP, loop4, tail, loop1)

store:
	MOVQ acc+80(FP), CX
	TESTQ CX, CX
	JZ   write
	ADDC6

write:
	STOREC6
	// the next tile: A aNext floats on, C 6 rows down
	DECQ tiles+0(FP)
	JZ   done
	MOVQ aNext+40(FP), CX
	SHLQ $2, CX
	ADDQ CX, a+16(FP)
	LEAQ (R10)(SI*2), DX
	ADDQ SI, DX
	MOVQ DX, c+64(FP)
	JMP  tile

done:
	VZEROUPPER
	RET

// func sgemmKernel6x16AVX2Cols(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int)
//
// sgemmKernel6x16AVX2 with STEPCOLS in its depth loops: the same contract,
// for an A read in place from a transposed A.
TEXT ·sgemmKernel6x16AVX2Cols(SB), NOSPLIT, $0-88
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

	TILE6(STEPCOLS)

store:
	MOVQ acc+80(FP), CX
	TESTQ CX, CX
	JZ   write
	ADDC6

write:
	STOREC6
	// the next tile: A aNext floats on, C 6 rows down
	DECQ tiles+0(FP)
	JZ   done
	MOVQ aNext+40(FP), CX
	SHLQ $2, CX
	ADDQ CX, a+16(FP)
	LEAQ (R10)(SI*2), DX
	ADDQ SI, DX
	MOVQ DX, c+64(FP)
	JMP  tile

done:
	VZEROUPPER
	RET

// func sgemmKernel6x16AVX2ColsPackA(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int, ap *float32)
//
// sgemmKernel6x16AVX2Cols (rsA = 1) that also copies each tile's A to its
// packed panel: tile t's A[r][p] to ap[t·6k + 6p + r], the panels one
// after the other from ap.
TEXT ·sgemmKernel6x16AVX2ColsPackA(SB), NOSPLIT, $0-96
	MOVQ rsA+24(FP), R8
	MOVQ csA+32(FP), R11
	MOVQ rsB+56(FP), R12
	MOVQ ldc+72(FP), SI
	MOVQ ap+88(FP), DI
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

	TILE6(STEPCOLSPACKA)

store:
	MOVQ acc+80(FP), CX
	TESTQ CX, CX
	JZ   write
	ADDC6

write:
	STOREC6
	// the next tile: A aNext floats on, C 6 rows down (DI is at its
	// packed panel already)
	DECQ tiles+0(FP)
	JZ   done
	MOVQ aNext+40(FP), CX
	SHLQ $2, CX
	ADDQ CX, a+16(FP)
	LEAQ (R10)(SI*2), DX
	ADDQ SI, DX
	MOVQ DX, c+64(FP)
	JMP  tile

done:
	VZEROUPPER
	RET

// func sgemmKernel6x16AVX2PackB(k int, a *float32, rsA, csA int, b *float32, rsB int, bp *float32, c *float32, ldc int, acc int)
//
// One tile of sgemmKernel6x16AVX2 whose B, read in place (row p at
// b + p·rsB floats), is also copied as it is used to the packed panel at
// bp (row p at bp + 16p floats): the packing of a B panel rides on its
// first tile's products.
TEXT ·sgemmKernel6x16AVX2PackB(SB), NOSPLIT, $0-80
	MOVQ rsA+16(FP), R8
	MOVQ csA+24(FP), R11
	MOVQ rsB+40(FP), R12
	MOVQ ldc+64(FP), SI
	SHLQ $2, R8
	SHLQ $2, R11
	SHLQ $2, R12
	SHLQ $2, SI
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+32(FP), BX
	MOVQ bp+48(FP), DI
	MOVQ c+56(FP), DX
	LEAQ (AX)(R8*2), R9
	ADDQ R8, R9

	TILE6(STEPPACKB)

store:
	MOVQ acc+72(FP), CX
	TESTQ CX, CX
	JZ   write
	ADDC6

write:
	STOREC6
	VZEROUPPER
	RET

// STEP2X2 does one depth step of the 2×16 edge kernel on two B panels
// (the second bNext = DI bytes after the first): rows 0 and 1 of A at AX,
// AX+R8; C row r in Y(4r)..Y(4r+3), columns 0-31.
#define STEP2X2 \
	VMOVUPS (BX), Y8; \
	VMOVUPS 32(BX), Y9; \
	VMOVUPS (BX)(DI*1), Y10; \
	VMOVUPS 32(BX)(DI*1), Y11; \
	VBROADCASTSS (AX), Y12; \
	VBROADCASTSS (AX)(R8*1), Y13; \
	ADDQ R11, AX; \
	ADDQ R12, BX; \
	VFMADD231PS Y8, Y12, Y0; \
	VFMADD231PS Y9, Y12, Y1; \
	VFMADD231PS Y10, Y12, Y2; \
	VFMADD231PS Y11, Y12, Y3; \
	VFMADD231PS Y8, Y13, Y4; \
	VFMADD231PS Y9, Y13, Y5; \
	VFMADD231PS Y10, Y13, Y6; \
	VFMADD231PS Y11, Y13, Y7

// STEP2 does one depth step of the 2×16 edge kernel on one B panel; C row
// r in Y(4r), Y(4r+1).
#define STEP2 \
	VMOVUPS (BX), Y8; \
	VMOVUPS 32(BX), Y9; \
	VBROADCASTSS (AX), Y12; \
	VBROADCASTSS (AX)(R8*1), Y13; \
	ADDQ R11, AX; \
	ADDQ R12, BX; \
	VFMADD231PS Y8, Y12, Y0; \
	VFMADD231PS Y9, Y12, Y1; \
	VFMADD231PS Y8, Y13, Y4; \
	VFMADD231PS Y9, Y13, Y5

// func sgemmKernel2x16AVX2(panels, k int, a *float32, rsA, csA int, b *float32, rsB, bNext int, c *float32, ldc int, acc int)
//
// The 2×16 edge kernel, with edgeFunc's contract: 2 rows of C across
// panels B panels, for row blocks of at most 4 rows (products of 128 or
// 512 rows leave 2 over the 6-row tiles). It takes the panels two at a
// time, a 2×32 tile: eight accumulators keep both FMA units busy, where
// the four of one panel would leave them waiting on their own results
// half of the time (an odd last panel runs so). Each element of C is
// summed in the 6×16 kernel's order.
TEXT ·sgemmKernel2x16AVX2(SB), NOSPLIT, $0-88
	MOVQ rsA+24(FP), R8
	MOVQ csA+32(FP), R11
	MOVQ rsB+48(FP), R12
	MOVQ bNext+56(FP), DI
	MOVQ ldc+72(FP), SI
	SHLQ $2, R8
	SHLQ $2, R11
	SHLQ $2, R12
	SHLQ $2, DI
	SHLQ $2, SI

pair2:
	MOVQ panels+0(FP), CX
	CMPQ CX, $2
	JLT  single2
	MOVQ k+8(FP), CX
	MOVQ a+16(FP), AX
	MOVQ b+40(FP), BX
	MOVQ c+64(FP), DX
	PREFETCHT0 (DX)
	PREFETCHT0 64(DX)
	PREFETCHT0 124(DX)
	PREFETCHT0 (DX)(SI*1)
	PREFETCHT0 64(DX)(SI*1)
	PREFETCHT0 124(DX)(SI*1)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

	MOVQ CX, R13
	SHRQ $2, CX
	JZ   pairtail2

pairloop4:
	STEP2X2
	STEP2X2
	STEP2X2
	STEP2X2
	DECQ CX
	JNZ  pairloop4

pairtail2:
	ANDQ $3, R13
	JZ   pairstore2

pairloop1:
	STEP2X2
	DECQ R13
	JNZ  pairloop1

pairstore2:
	MOVQ acc+80(FP), CX
	TESTQ CX, CX
	JZ   pairwrite2
	VADDPS (DX), Y0, Y0
	VADDPS 32(DX), Y1, Y1
	VADDPS 64(DX), Y2, Y2
	VADDPS 96(DX), Y3, Y3
	VADDPS (DX)(SI*1), Y4, Y4
	VADDPS 32(DX)(SI*1), Y5, Y5
	VADDPS 64(DX)(SI*1), Y6, Y6
	VADDPS 96(DX)(SI*1), Y7, Y7

pairwrite2:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VMOVUPS Y4, (DX)(SI*1)
	VMOVUPS Y5, 32(DX)(SI*1)
	VMOVUPS Y6, 64(DX)(SI*1)
	VMOVUPS Y7, 96(DX)(SI*1)
	// the next two panels: B 2·bNext on, C 32 columns on
	LEAQ (DI)(DI*1), CX
	ADDQ CX, b+40(FP)
	ADDQ $128, c+64(FP)
	SUBQ $2, panels+0(FP)
	JMP  pair2

single2:
	TESTQ CX, CX
	JZ   done2
	MOVQ k+8(FP), CX
	MOVQ a+16(FP), AX
	MOVQ b+40(FP), BX
	MOVQ c+64(FP), DX
	PREFETCHT0 (DX)
	PREFETCHT0 60(DX)
	PREFETCHT0 (DX)(SI*1)
	PREFETCHT0 60(DX)(SI*1)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5

	MOVQ CX, R13
	SHRQ $2, CX
	JZ   tail2

loop2x4:
	STEP2
	STEP2
	STEP2
	STEP2
	DECQ CX
	JNZ  loop2x4

tail2:
	ANDQ $3, R13
	JZ   store2

loop2x1:
	STEP2
	DECQ R13
	JNZ  loop2x1

store2:
	MOVQ acc+80(FP), CX
	TESTQ CX, CX
	JZ   write2
	VADDPS (DX), Y0, Y0
	VADDPS 32(DX), Y1, Y1
	VADDPS (DX)(SI*1), Y4, Y4
	VADDPS 32(DX)(SI*1), Y5, Y5

write2:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y4, (DX)(SI*1)
	VMOVUPS Y5, 32(DX)(SI*1)

done2:
	VZEROUPPER
	RET

// func dot4AVX2(k8 int, x, w *float32, ldw int, out *[4]float32)
//
// out[r] = Σp x[p]·w[r·ldw + p] for r < 4 and p < 8·k8 (k8 ≥ 1): one
// 8-float load of x feeds four FMAs, one per row of w (Y0..Y3 hold the
// rows' partial sums lane by lane); the lanes are then added pairwise.
TEXT ·dot4AVX2(SB), NOSPLIT, $0-40
	MOVQ k8+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), AX
	MOVQ ldw+24(FP), R8
	MOVQ out+32(FP), DX
	SHLQ $2, R8
	LEAQ (AX)(R8*2), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

dotloop:
	VMOVUPS (SI), Y4
	VFMADD231PS (AX), Y4, Y0
	VFMADD231PS (AX)(R8*1), Y4, Y1
	VFMADD231PS (R9), Y4, Y2
	VFMADD231PS (R9)(R8*1), Y4, Y3
	ADDQ $32, SI
	ADDQ $32, AX
	ADDQ $32, R9
	DECQ CX
	JNZ  dotloop

	// [r0 pairs, r1 pairs], [r2 pairs, r3 pairs], then the four rows'
	// half-sums in each 128-bit lane
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET
