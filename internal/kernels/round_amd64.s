//go:build amd64 && !purego

#include "textflag.h"

// The rounding of float32 values to bfloat16 (round.go) on the bit
// patterns: b + 0x7FFF + bit 16 of b, the low 16 bits cleared; NaN lanes
// (unordered with themselves) become 0xFFFF0000.

// func roundBF16AVX2(dst, src *float32, n int)
TEXT ·roundBF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL $0x7FFF, AX
	MOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $1, AX
	MOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0xFFFF0000, AX
	MOVD AX, X13
	VPBROADCASTD X13, Y13

loop8:
	VMOVDQU (SI), Y0
	VPSRLD  $16, Y0, Y1
	VPAND   Y14, Y1, Y1
	VPADDD  Y15, Y0, Y2
	VPADDD  Y1, Y2, Y2
	VPAND   Y13, Y2, Y2
	VCMPPS  $3, Y0, Y0, Y3
	VBLENDVPS Y3, Y13, Y2, Y2
	VMOVDQU Y2, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     loop8
	VZEROUPPER
	RET

// func roundBF16AVX512(dst, src *float32, n int)
TEXT ·roundBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL $0x7FFF, AX
	VPBROADCASTD AX, Z15
	MOVL $1, AX
	VPBROADCASTD AX, Z14
	MOVL $0xFFFF0000, AX
	VPBROADCASTD AX, Z13

loop16:
	VMOVDQU32 (SI), Z0
	VPSRLD    $16, Z0, Z1
	VPANDD    Z14, Z1, Z1
	VPADDD    Z15, Z0, Z2
	VPADDD    Z1, Z2, Z2
	VPANDD    Z13, Z2, Z2
	VCMPPS    $3, Z0, Z0, K1
	VMOVDQA32 Z13, K1, Z2
	VMOVDQU32 Z2, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JNZ       loop16
	VZEROUPPER
	RET

// The bit patterns: the sum shifted right by 16 (NaN lanes 0xFFFF),
// narrowed to 16 bits.

// func roundBF16BitsAVX2(dst *uint16, src *float32, n int)
TEXT ·roundBF16BitsAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL $0x7FFF, AX
	MOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $1, AX
	MOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0xFFFF, AX
	MOVD AX, X13
	VPBROADCASTD X13, Y13

bits8:
	VMOVDQU (SI), Y0
	VPSRLD  $16, Y0, Y1
	VPAND   Y14, Y1, Y1
	VPADDD  Y15, Y0, Y2
	VPADDD  Y1, Y2, Y2
	VPSRLD  $16, Y2, Y2
	VCMPPS  $3, Y0, Y0, Y3
	VBLENDVPS Y3, Y13, Y2, Y2
	VPACKUSDW Y2, Y2, Y2
	VPERMQ  $0x08, Y2, Y2
	VMOVDQU X2, (DI)
	ADDQ    $32, SI
	ADDQ    $16, DI
	SUBQ    $8, CX
	JNZ     bits8
	VZEROUPPER
	RET

// func roundBF16BitsAVX512(dst *uint16, src *float32, n int)
TEXT ·roundBF16BitsAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL $0x7FFF, AX
	VPBROADCASTD AX, Z15
	MOVL $1, AX
	VPBROADCASTD AX, Z14
	MOVL $0xFFFF, AX
	VPBROADCASTD AX, Z13

bits16:
	VMOVDQU32 (SI), Z0
	VPSRLD    $16, Z0, Z1
	VPANDD    Z14, Z1, Z1
	VPADDD    Z15, Z0, Z2
	VPADDD    Z1, Z2, Z2
	VPSRLD    $16, Z2, Z2
	VCMPPS    $3, Z0, Z0, K1
	VMOVDQA32 Z13, K1, Z2
	VPMOVDW   Z2, Y2
	VMOVDQU   Y2, (DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	SUBQ      $16, CX
	JNZ       bits16
	VZEROUPPER
	RET
