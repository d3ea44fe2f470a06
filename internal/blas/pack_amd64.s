//go:build amd64 && !purego

#include "textflag.h"

// PACKBROWS is the body of packBRows16AVX2 and packBRows32AVX512, one for
// both widths: it copies CX rows of two vectors (v0 and v1, vb bytes each)
// from SI, DX floats apart, to consecutive rows at DI. The arguments are
// loaded in each TEXT block, so that go vet checks them.
#define PACKBROWS(v0, v1, vb) \
	SHLQ $2, DX \
rows: \
	VMOVUPS (SI), v0 \
	VMOVUPS vb(SI), v1 \
	VMOVUPS v0, (DI) \
	VMOVUPS v1, vb(DI) \
	ADDQ DX, SI \
	ADDQ $(2*vb), DI \
	DECQ CX \
	JNZ  rows \
	VZEROUPPER \
	RET

// func packBRows16AVX2(dst, src *float32, ldb, kb int)
//
// dst[p*16+j] = src[p*ldb+j] for p < kb, j < 16: a B panel of an untransposed
// B. kb ≥ 1.
TEXT ·packBRows16AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ldb+16(FP), DX
	MOVQ kb+24(FP), CX
	PACKBROWS(Y0, Y1, 32)

// TRANSPOSE8 transposes the 8×8 block whose rows are in Y0..Y7; the
// columns end up in Y8..Y15 (column c in Y(8+c)). Y0..Y7 are clobbered.
#define TRANSPOSE8 \
	VUNPCKLPS Y1, Y0, Y8; \
	VUNPCKHPS Y1, Y0, Y9; \
	VUNPCKLPS Y3, Y2, Y10; \
	VUNPCKHPS Y3, Y2, Y11; \
	VUNPCKLPS Y5, Y4, Y12; \
	VUNPCKHPS Y5, Y4, Y13; \
	VUNPCKLPS Y7, Y6, Y14; \
	VUNPCKHPS Y7, Y6, Y15; \
	VSHUFPS $0x44, Y10, Y8, Y0; \
	VSHUFPS $0xEE, Y10, Y8, Y1; \
	VSHUFPS $0x44, Y11, Y9, Y2; \
	VSHUFPS $0xEE, Y11, Y9, Y3; \
	VSHUFPS $0x44, Y14, Y12, Y4; \
	VSHUFPS $0xEE, Y14, Y12, Y5; \
	VSHUFPS $0x44, Y15, Y13, Y6; \
	VSHUFPS $0xEE, Y15, Y13, Y7; \
	VPERM2F128 $0x20, Y4, Y0, Y8; \
	VPERM2F128 $0x20, Y5, Y1, Y9; \
	VPERM2F128 $0x20, Y6, Y2, Y10; \
	VPERM2F128 $0x20, Y7, Y3, Y11; \
	VPERM2F128 $0x31, Y4, Y0, Y12; \
	VPERM2F128 $0x31, Y5, Y1, Y13; \
	VPERM2F128 $0x31, Y6, Y2, Y14; \
	VPERM2F128 $0x31, Y7, Y3, Y15

// STORECOLS stores the 8 transposed columns as 8 rows of a B panel, at
// byte offset off within each row; rows are R12 bytes apart (R13 = 3·R12,
// R14 = DI + 4·R12).
#define STORECOLS(off) \
	VMOVUPS Y8, off(DI); \
	VMOVUPS Y9, off(DI)(R12*1); \
	VMOVUPS Y10, off(DI)(R12*2); \
	VMOVUPS Y11, off(DI)(R13*1); \
	VMOVUPS Y12, off(R14); \
	VMOVUPS Y13, off(R14)(R12*1); \
	VMOVUPS Y14, off(R14)(R12*2); \
	VMOVUPS Y15, off(R14)(R13*1)

// func packBCols16AVX2(dst, src *float32, ldb, ldd, kb8 int)
//
// dst[p*ldd+j] = src[j*ldb+p] for p < 8·kb8, j < 16: 16 columns of a B
// panel (ldd floats wide) of a transposed B, by 8×8 transposes. kb8 ≥ 1.
TEXT ·packBCols16AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ldb+16(FP), DX
	MOVQ ldd+24(FP), R12
	MOVQ kb8+32(FP), CX
	SHLQ $2, DX
	SHLQ $2, R12
	LEAQ (DX)(DX*2), R8
	LEAQ (R12)(R12*2), R13

blocks:
	LEAQ (DI)(R12*4), R14
	// rows j = 0..7 start at SI, R9 = SI + 4·stride
	LEAQ (SI)(DX*4), R9
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(DX*1), Y1
	VMOVUPS (SI)(DX*2), Y2
	VMOVUPS (SI)(R8*1), Y3
	VMOVUPS (R9), Y4
	VMOVUPS (R9)(DX*1), Y5
	VMOVUPS (R9)(DX*2), Y6
	VMOVUPS (R9)(R8*1), Y7
	TRANSPOSE8
	STORECOLS(0)

	// rows j = 8..15
	LEAQ (R9)(DX*4), R10
	LEAQ (R10)(DX*4), R11
	VMOVUPS (R10), Y0
	VMOVUPS (R10)(DX*1), Y1
	VMOVUPS (R10)(DX*2), Y2
	VMOVUPS (R10)(R8*1), Y3
	VMOVUPS (R11), Y4
	VMOVUPS (R11)(DX*1), Y5
	VMOVUPS (R11)(DX*2), Y6
	VMOVUPS (R11)(R8*1), Y7
	TRANSPOSE8
	STORECOLS(32)

	ADDQ $32, SI
	LEAQ (DI)(R12*8), DI
	DECQ CX
	JNZ  blocks
	VZEROUPPER
	RET

// func packACols6AVX2(dst, src *float32, lda, kb, panels int)
//
// dst[q*kb*6 + p*6 + r] = src[p*lda + q*6 + r] for p < kb, q < panels,
// r < 6: consecutive A panels of a transposed A. The stored rows of A are
// read one at a time, start to end (sequential reads that the prefetchers
// follow), and spread over the panels. kb, panels ≥ 1.
TEXT ·packACols6AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lda+16(FP), DX
	MOVQ kb+24(FP), CX
	MOVQ panels+32(FP), R8
	SHLQ $2, DX
	// R9: bytes from one panel to the next in dst
	LEAQ (CX)(CX*2), R9
	SHLQ $3, R9

rowloop:
	MOVQ SI, R10
	MOVQ DI, R11
	MOVQ R8, R12

panelloop:
	VMOVUPS (R10), X0
	VMOVQ 16(R10), X1
	VMOVUPS X0, (R11)
	VMOVQ X1, 16(R11)
	ADDQ $24, R10
	ADDQ R9, R11
	DECQ R12
	JNZ  panelloop

	ADDQ DX, SI
	ADDQ $24, DI
	DECQ CX
	JNZ  rowloop
	RET

// func packACols12AVX2(dst, src *float32, lda, kb, panels int)
//
// dst[q*kb*12 + p*12 + r] = src[p*lda + q*12 + r] for p < kb, q < panels,
// r < 12: packACols6AVX2 for 12-row panels. kb, panels ≥ 1.
TEXT ·packACols12AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lda+16(FP), DX
	MOVQ kb+24(FP), CX
	MOVQ panels+32(FP), R8
	SHLQ $2, DX
	// R9: bytes from one panel to the next in dst
	LEAQ (CX)(CX*2), R9
	SHLQ $4, R9

rowloop12:
	MOVQ SI, R10
	MOVQ DI, R11
	MOVQ R8, R12

panelloop12:
	VMOVUPS (R10), Y0
	VMOVUPS 32(R10), X1
	VMOVUPS Y0, (R11)
	VMOVUPS X1, 32(R11)
	ADDQ $48, R10
	ADDQ R9, R11
	DECQ R12
	JNZ  panelloop12

	ADDQ DX, SI
	ADDQ $48, DI
	DECQ CX
	JNZ  rowloop12
	VZEROUPPER
	RET

// func packBRows32AVX512(dst, src *float32, ldb, kb int)
//
// dst[p*32+j] = src[p*ldb+j] for p < kb, j < 32: a B panel of an
// untransposed B for the 12×32 kernel. kb ≥ 1.
TEXT ·packBRows32AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ldb+16(FP), DX
	MOVQ kb+24(FP), CX
	PACKBROWS(Z0, Z1, 64)
