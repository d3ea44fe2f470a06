// The GELU kernels of kernels_amd64.s as they were before lanes whose
// e^(−x²/2) underflows (|x| > 13.2) stopped evaluating the exponential at
// the clamp, and lanes with x ≥ 8 stopped evaluating the erfc tail: both
// produced subnormal intermediates, which cost a microcode assist per
// instruction on Intel CPUs, before being masked to 0 or rounded away.
// Only gelu_prev_amd64_test.go calls them, to check that the current
// kernels give their bits for every input; the linker drops them from
// other binaries.

//go:build amd64 && !purego

#include "textflag.h"

#include "gelu_consts_amd64.h"

#define PREVGELU_CDF \
	VMOVUPS (SI), Y0 \
	VMULPS Y0, Y0, Y1 \
	VMOVAPS Y0, Y2 \
	VFMSUB213PS Y1, Y0, Y2 \
	VMULPS gelu_neghalf<>(SB), Y1, Y1 \
	VMULPS gelu_half<>(SB), Y2, Y2 \
	VCMPPS $1, gelu_minarg<>(SB), Y1, Y3 \
	VMAXPS gelu_minarg<>(SB), Y1, Y1 \
	VMOVUPS gelu_log2e<>(SB), Y4 \
	VFMADD213PS gelu_half<>(SB), Y1, Y4 \
	VROUNDPS $1, Y4, Y4 \
	VMOVAPS Y1, Y5 \
	VFNMADD231PS gelu_c1<>(SB), Y4, Y5 \
	VFNMADD231PS gelu_c2<>(SB), Y4, Y5 \
	VMULPS Y5, Y5, Y7 \
	VMOVUPS gelu_p0<>(SB), Y6 \
	VFMADD213PS gelu_p1<>(SB), Y5, Y6 \
	VMOVUPS gelu_p2<>(SB), Y13 \
	VFMADD213PS gelu_p3<>(SB), Y5, Y13 \
	VMOVUPS gelu_p4<>(SB), Y14 \
	VFMADD213PS gelu_p5<>(SB), Y5, Y14 \
	VFMADD213PS Y13, Y7, Y6 \
	VFMADD213PS Y14, Y7, Y6 \
	VFMADD213PS Y5, Y7, Y6 \
	VADDPS gelu_one<>(SB), Y6, Y6 \
	VCVTPS2DQ Y4, Y4 \
	VPSLLD $23, Y4, Y4 \
	VPADDD gelu_bias<>(SB), Y4, Y4 \
	VMULPS Y4, Y6, Y6 \
	VFNMADD231PS Y2, Y6, Y6 \
	VANDNPS Y6, Y3, Y6 \
	VANDPS gelu_absmask<>(SB), Y0, Y7 \
	VMULPS gelu_invsqrt2<>(SB), Y7, Y7 \
	VMULPS Y7, Y7, Y8 \
	VMULPS Y8, Y8, Y15 \
	VMOVUPS gelu_a5<>(SB), Y9 \
	VFMADD213PS gelu_a4<>(SB), Y8, Y9 \
	VMOVUPS gelu_a3<>(SB), Y13 \
	VFMADD213PS gelu_a2<>(SB), Y8, Y13 \
	VMOVUPS gelu_a1<>(SB), Y14 \
	VFMADD213PS gelu_a0<>(SB), Y8, Y14 \
	VFMADD213PS Y13, Y15, Y9 \
	VFMADD213PS Y14, Y15, Y9 \
	VMULPS Y7, Y9, Y9 \
	VMULPS gelu_half<>(SB), Y9, Y9 \
	VANDPS gelu_signmask<>(SB), Y0, Y10 \
	VORPS Y10, Y9, Y9 \
	VADDPS gelu_half<>(SB), Y9, Y9 \
	VMOVUPS gelu_one<>(SB), Y8 \
	VFMADD231PS gelu_half<>(SB), Y7, Y8 \
	VMOVUPS gelu_one<>(SB), Y10 \
	VDIVPS Y8, Y10, Y8 \
	VMULPS Y8, Y8, Y15 \
	VMOVUPS gelu_b7<>(SB), Y10 \
	VFMADD213PS gelu_b6<>(SB), Y8, Y10 \
	VMOVUPS gelu_b5<>(SB), Y11 \
	VFMADD213PS gelu_b4<>(SB), Y8, Y11 \
	VMOVUPS gelu_b3<>(SB), Y13 \
	VFMADD213PS gelu_b2<>(SB), Y8, Y13 \
	VMOVUPS gelu_b1<>(SB), Y14 \
	VFMADD213PS gelu_b0<>(SB), Y8, Y14 \
	VFMADD213PS Y11, Y15, Y10 \
	VFMADD213PS Y14, Y15, Y13 \
	VMULPS Y15, Y15, Y15 \
	VFMADD213PS Y13, Y15, Y10 \
	VMULPS Y8, Y10, Y10 \
	VMULPS Y6, Y10, Y10 \
	VMULPS gelu_half<>(SB), Y10, Y10 \
	VMOVUPS gelu_one<>(SB), Y11 \
	VSUBPS Y10, Y11, Y11 \
	VBLENDVPS Y0, Y10, Y11, Y11 \
	VCMPPS $1, gelu_one<>(SB), Y7, Y12 \
	VBLENDVPS Y12, Y9, Y11, Y9


TEXT ·geluPrevAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   oldfwddone
oldfwdloop:
	PREVGELU_CDF
	VMULPS Y0, Y9, Y9
	VMOVUPS Y9, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  oldfwdloop
oldfwddone:
	VZEROUPPER
	RET

// func geluGradAVX2(dst, gr, x *float32, n int)
// dst[i] = gr[i]·(Φ(x[i]) + x[i]·φ(x[i])) for n (a multiple of 8) elements.
TEXT ·geluPrevGradAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ gr+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   oldbwddone
oldbwdloop:
	PREVGELU_CDF
	VMULPS gelu_invsqrt2pi<>(SB), Y6, Y6
	VFMADD231PS Y0, Y6, Y9
	VMULPS (DX), Y9, Y9
	VMOVUPS Y9, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ  oldbwdloop
oldbwddone:
	VZEROUPPER
	RET


#define PREVGELU_CDF16 \
	VMOVUPS (SI), Z0 \
	VMULPS Z0, Z0, Z1 \
	VMOVAPS Z0, Z2 \
	VFMSUB213PS Z1, Z0, Z2 \
	VMULPS.BCST gelu_neghalf<>(SB), Z1, Z1 \
	VCMPPS.BCST $5, gelu_minarg<>(SB), Z1, K1 \
	VMAXPS.BCST gelu_minarg<>(SB), Z1, Z1 \
	VBROADCASTSS gelu_log2e<>(SB), Z4 \
	VFMADD213PS.BCST gelu_half<>(SB), Z1, Z4 \
	VMULPS.BCST gelu_half<>(SB), Z2, Z2 \
	VRNDSCALEPS $1, Z4, Z4 \
	VMOVAPS Z1, Z5 \
	VFNMADD231PS.BCST gelu_c1<>(SB), Z4, Z5 \
	VFNMADD231PS.BCST gelu_c2<>(SB), Z4, Z5 \
	VMULPS Z5, Z5, Z7 \
	VBROADCASTSS gelu_p0<>(SB), Z6 \
	VFMADD213PS.BCST gelu_p1<>(SB), Z5, Z6 \
	VBROADCASTSS gelu_p2<>(SB), Z13 \
	VFMADD213PS.BCST gelu_p3<>(SB), Z5, Z13 \
	VBROADCASTSS gelu_p4<>(SB), Z14 \
	VFMADD213PS.BCST gelu_p5<>(SB), Z5, Z14 \
	VFMADD213PS Z13, Z7, Z6 \
	VFMADD213PS Z14, Z7, Z6 \
	VFMADD213PS Z5, Z7, Z6 \
	VADDPS.BCST gelu_one<>(SB), Z6, Z6 \
	VCVTPS2DQ Z4, Z4 \
	VPSLLD $23, Z4, Z4 \
	VPADDD.BCST gelu_bias<>(SB), Z4, Z4 \
	VMULPS Z4, Z6, Z6 \
	VFNMADD231PS Z2, Z6, Z6 \
	VMOVAPS.Z Z6, K1, Z6 \
	VANDPS.BCST gelu_absmask<>(SB), Z0, Z7 \
	VMULPS.BCST gelu_invsqrt2<>(SB), Z7, Z7 \
	VMULPS Z7, Z7, Z8 \
	VMULPS Z8, Z8, Z15 \
	VBROADCASTSS gelu_a5<>(SB), Z9 \
	VFMADD213PS.BCST gelu_a4<>(SB), Z8, Z9 \
	VBROADCASTSS gelu_a3<>(SB), Z13 \
	VFMADD213PS.BCST gelu_a2<>(SB), Z8, Z13 \
	VBROADCASTSS gelu_a1<>(SB), Z14 \
	VFMADD213PS.BCST gelu_a0<>(SB), Z8, Z14 \
	VFMADD213PS Z13, Z15, Z9 \
	VFMADD213PS Z14, Z15, Z9 \
	VMULPS Z7, Z9, Z9 \
	VMULPS.BCST gelu_half<>(SB), Z9, Z9 \
	VANDPS.BCST gelu_signmask<>(SB), Z0, Z10 \
	VORPS Z10, Z9, Z9 \
	VADDPS.BCST gelu_half<>(SB), Z9, Z9 \
	VBROADCASTSS gelu_one<>(SB), Z8 \
	VFMADD231PS.BCST gelu_half<>(SB), Z7, Z8 \
	VBROADCASTSS gelu_one<>(SB), Z10 \
	VDIVPS Z8, Z10, Z8 \
	VMULPS Z8, Z8, Z15 \
	VBROADCASTSS gelu_b7<>(SB), Z10 \
	VFMADD213PS.BCST gelu_b6<>(SB), Z8, Z10 \
	VBROADCASTSS gelu_b5<>(SB), Z11 \
	VFMADD213PS.BCST gelu_b4<>(SB), Z8, Z11 \
	VBROADCASTSS gelu_b3<>(SB), Z13 \
	VFMADD213PS.BCST gelu_b2<>(SB), Z8, Z13 \
	VBROADCASTSS gelu_b1<>(SB), Z14 \
	VFMADD213PS.BCST gelu_b0<>(SB), Z8, Z14 \
	VFMADD213PS Z11, Z15, Z10 \
	VFMADD213PS Z14, Z15, Z13 \
	VMULPS Z15, Z15, Z15 \
	VFMADD213PS Z13, Z15, Z10 \
	VMULPS Z8, Z10, Z10 \
	VMULPS Z6, Z10, Z10 \
	VMULPS.BCST gelu_half<>(SB), Z10, Z10 \
	VBROADCASTSS gelu_one<>(SB), Z11 \
	VSUBPS Z10, Z11, Z11 \
	VPMOVD2M Z0, K3 \
	VMOVAPS Z10, K3, Z11 \
	VCMPPS.BCST $5, gelu_one<>(SB), Z7, K4 \
	VMOVAPS Z11, K4, Z9


TEXT ·geluPrevAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   oldfwd16done
oldfwd16loop:
	PREVGELU_CDF16
	VMULPS Z0, Z9, Z9
	VMOVUPS Z9, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  oldfwd16loop
oldfwd16done:
	VZEROUPPER
	RET

// func geluGradAVX512(dst, gr, x *float32, n int)
// dst[i] = gr[i]·(Φ(x[i]) + x[i]·φ(x[i])) for n (a multiple of 16) elements.
TEXT ·geluPrevGradAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ gr+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   oldbwd16done
oldbwd16loop:
	PREVGELU_CDF16
	VMULPS.BCST gelu_invsqrt2pi<>(SB), Z6, Z6
	VFMADD231PS Z0, Z6, Z9
	VMULPS (DX), Z9, Z9
	VMOVUPS Z9, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	DECQ CX
	JNZ  oldbwd16loop
oldbwd16done:
	VZEROUPPER
	RET

