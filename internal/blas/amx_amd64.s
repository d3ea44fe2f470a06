//go:build amd64 && !purego

#include "textflag.h"

// func amxKernel32x32(kq int, a *uint16, rs int, b *uint32, c *float32, ldc, acc int, cfg *[64]byte)
//
// The 32×32 float32 block of C at c (rows ldc elements apart; loaded and
// added to when acc is non-zero, else zeroed) plus A·B over 16·kq pairs of
// depths (kq ≥ 1): A's rows of pairs rs bytes apart, B packed in groups of
// 32 words (128 bytes apart), as amxTileGo describes. The tiles, as cfg
// configures them (amxConfig: 16 rows of 64 bytes each): tmm0–3 the four
// 16×16 quarters of C, tmm4 and tmm5 rows 0–15 and 16–31 of A's next 16
// pairs, tmm6 and tmm7 columns 0–15 and 16–31 of B's; per 16 pairs four
// TDPBF16PS (tmm0 += tmm4·tmm6, tmm1 += tmm4·tmm7, tmm2 += tmm5·tmm6,
// tmm3 += tmm5·tmm7). The tile state is configured and released within
// the call, so no goroutine ever finds it set. Go's assembler has no AMX
// mnemonics: each instruction is spelled in bytes (as GNU as 2.40 encodes
// them), the comment beside it naming it in Intel syntax.
TEXT ·amxKernel32x32(SB), NOSPLIT, $0-64
	MOVQ kq+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rs+16(FP), R13
	MOVQ b+24(FP), BX
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	MOVQ acc+48(FP), R12
	MOVQ cfg+56(FP), AX
	SHLQ $2, R8         // C's row stride in bytes
	MOVQ R13, R10
	SHLQ $4, R10
	ADDQ SI, R10        // A's row 16
	MOVQ R8, R9
	SHLQ $4, R9
	ADDQ DX, R9         // C's row 16
	MOVQ $128, R11      // B's row (pair) stride
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00 // LDTILECFG [RAX]
	TESTQ R12, R12
	JZ zero
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x02 // TILELOADD tmm0, [RDX+R8]
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x4c; BYTE $0x02; BYTE $0x40 // TILELOADD tmm1, [RDX+R8+64]
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x01 // TILELOADD tmm2, [R9+R8]
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x5c; BYTE $0x01; BYTE $0x40 // TILELOADD tmm3, [R9+R8+64]
	JMP loop

zero:
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0 // TILEZERO tmm0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8 // TILEZERO tmm1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0 // TILEZERO tmm2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8 // TILEZERO tmm3

loop:
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x2e // TILELOADD tmm4, [RSI+R13]
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x2a // TILELOADD tmm5, [R10+R13]
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x1b // TILELOADD tmm6, [RBX+R11]
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x7c; BYTE $0x1b; BYTE $0x40 // TILELOADD tmm7, [RBX+R11+64]
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4 // TDPBF16PS tmm0, tmm4, tmm6
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc // TDPBF16PS tmm1, tmm4, tmm7
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5 // TDPBF16PS tmm2, tmm5, tmm6
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd // TDPBF16PS tmm3, tmm5, tmm7
	ADDQ $64, SI        // the next 16 pairs of A's rows
	ADDQ $64, R10
	ADDQ $2048, BX      // B's next 16 groups
	DECQ CX
	JNZ loop

	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x02 // TILESTORED [RDX+R8], tmm0
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x4c; BYTE $0x02; BYTE $0x40 // TILESTORED [RDX+R8+64], tmm1
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x14; BYTE $0x01 // TILESTORED [R9+R8], tmm2
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x5c; BYTE $0x01; BYTE $0x40 // TILESTORED [R9+R8+64], tmm3
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0 // TILERELEASE
	RET
