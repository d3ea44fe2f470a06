// AVX2+FMA kernels of vec.go, 8 lanes at a time: exact GELU and its
// derivative (the approximations of NormCDFPDF and Exp32), e^(x−m) with its
// sum (softmax, cross-entropy) and the AdamW update; and their AVX-512
// versions, 16 lanes at a time. The kernels whose two widths have the same
// shape (arithmetic, scale, AdamW, the float64 row sum and dot product,
// LayerNorm's row kernels of layernorm.go and softmax's sweeps of
// softmax.go) are one macro body each, at the end of the file.
// Constants are 32-byte vectors of one repeated float32 (bit patterns of the
// constants in vec.go; docs/perf-train.md has the fit that produced
// them). After the macro bodies come the kernels of the unary op table's
// Exp, Tanh and Sigmoid rows (unary_ops.go), each in both widths, with
// their own constants.

//go:build amd64 && !purego

#include "textflag.h"

#include "gelu_consts_amd64.h"

DATA gelu_tailx<>+0(SB)/4, $0x41000000
DATA gelu_tailx<>+4(SB)/4, $0x41000000
DATA gelu_tailx<>+8(SB)/4, $0x41000000
DATA gelu_tailx<>+12(SB)/4, $0x41000000
DATA gelu_tailx<>+16(SB)/4, $0x41000000
DATA gelu_tailx<>+20(SB)/4, $0x41000000
DATA gelu_tailx<>+24(SB)/4, $0x41000000
DATA gelu_tailx<>+28(SB)/4, $0x41000000
GLOBL gelu_tailx<>(SB), RODATA|NOPTR, $32

// The constants of the GELU parts below that the previous kernels
// (gelu_prev_amd64.s) do not use: gelu_xmax (167.70126, the bound on x²
// past which the kernels take e^(−x²/2) as 0: GELUFlushX2 of vec.go),
// −log2(e)/2, 2^23 + 127 (whose low bits,
// after adding an integer n in [−126, 0], are the biased exponent of 2^n)
// and the coefficients of the erf polynomial halved.
DATA gelu_xmax<>+0(SB)/4, $0x4327b386
DATA gelu_xmax<>+4(SB)/4, $0x4327b386
DATA gelu_xmax<>+8(SB)/4, $0x4327b386
DATA gelu_xmax<>+12(SB)/4, $0x4327b386
DATA gelu_xmax<>+16(SB)/4, $0x4327b386
DATA gelu_xmax<>+20(SB)/4, $0x4327b386
DATA gelu_xmax<>+24(SB)/4, $0x4327b386
DATA gelu_xmax<>+28(SB)/4, $0x4327b386
GLOBL gelu_xmax<>(SB), RODATA|NOPTR, $32
DATA gelu_nhlog2e<>+0(SB)/4, $0xbf38aa3b
DATA gelu_nhlog2e<>+4(SB)/4, $0xbf38aa3b
DATA gelu_nhlog2e<>+8(SB)/4, $0xbf38aa3b
DATA gelu_nhlog2e<>+12(SB)/4, $0xbf38aa3b
DATA gelu_nhlog2e<>+16(SB)/4, $0xbf38aa3b
DATA gelu_nhlog2e<>+20(SB)/4, $0xbf38aa3b
DATA gelu_nhlog2e<>+24(SB)/4, $0xbf38aa3b
DATA gelu_nhlog2e<>+28(SB)/4, $0xbf38aa3b
GLOBL gelu_nhlog2e<>(SB), RODATA|NOPTR, $32
DATA gelu_magic<>+0(SB)/4, $0x4b00007f
DATA gelu_magic<>+4(SB)/4, $0x4b00007f
DATA gelu_magic<>+8(SB)/4, $0x4b00007f
DATA gelu_magic<>+12(SB)/4, $0x4b00007f
DATA gelu_magic<>+16(SB)/4, $0x4b00007f
DATA gelu_magic<>+20(SB)/4, $0x4b00007f
DATA gelu_magic<>+24(SB)/4, $0x4b00007f
DATA gelu_magic<>+28(SB)/4, $0x4b00007f
GLOBL gelu_magic<>(SB), RODATA|NOPTR, $32
DATA gelu_ah0<>+0(SB)/4, $0x3f106eba
DATA gelu_ah0<>+4(SB)/4, $0x3f106eba
DATA gelu_ah0<>+8(SB)/4, $0x3f106eba
DATA gelu_ah0<>+12(SB)/4, $0x3f106eba
DATA gelu_ah0<>+16(SB)/4, $0x3f106eba
DATA gelu_ah0<>+20(SB)/4, $0x3f106eba
DATA gelu_ah0<>+24(SB)/4, $0x3f106eba
DATA gelu_ah0<>+28(SB)/4, $0x3f106eba
GLOBL gelu_ah0<>(SB), RODATA|NOPTR, $32
DATA gelu_ah1<>+0(SB)/4, $0xbe409358
DATA gelu_ah1<>+4(SB)/4, $0xbe409358
DATA gelu_ah1<>+8(SB)/4, $0xbe409358
DATA gelu_ah1<>+12(SB)/4, $0xbe409358
DATA gelu_ah1<>+16(SB)/4, $0xbe409358
DATA gelu_ah1<>+20(SB)/4, $0xbe409358
DATA gelu_ah1<>+24(SB)/4, $0xbe409358
DATA gelu_ah1<>+28(SB)/4, $0xbe409358
GLOBL gelu_ah1<>(SB), RODATA|NOPTR, $32
DATA gelu_ah2<>+0(SB)/4, $0x3d6707d0
DATA gelu_ah2<>+4(SB)/4, $0x3d6707d0
DATA gelu_ah2<>+8(SB)/4, $0x3d6707d0
DATA gelu_ah2<>+12(SB)/4, $0x3d6707d0
DATA gelu_ah2<>+16(SB)/4, $0x3d6707d0
DATA gelu_ah2<>+20(SB)/4, $0x3d6707d0
DATA gelu_ah2<>+24(SB)/4, $0x3d6707d0
DATA gelu_ah2<>+28(SB)/4, $0x3d6707d0
GLOBL gelu_ah2<>(SB), RODATA|NOPTR, $32
DATA gelu_ah3<>+0(SB)/4, $0xbc5af263
DATA gelu_ah3<>+4(SB)/4, $0xbc5af263
DATA gelu_ah3<>+8(SB)/4, $0xbc5af263
DATA gelu_ah3<>+12(SB)/4, $0xbc5af263
DATA gelu_ah3<>+16(SB)/4, $0xbc5af263
DATA gelu_ah3<>+20(SB)/4, $0xbc5af263
DATA gelu_ah3<>+24(SB)/4, $0xbc5af263
DATA gelu_ah3<>+28(SB)/4, $0xbc5af263
GLOBL gelu_ah3<>(SB), RODATA|NOPTR, $32
DATA gelu_ah4<>+0(SB)/4, $0x3b21b0c1
DATA gelu_ah4<>+4(SB)/4, $0x3b21b0c1
DATA gelu_ah4<>+8(SB)/4, $0x3b21b0c1
DATA gelu_ah4<>+12(SB)/4, $0x3b21b0c1
DATA gelu_ah4<>+16(SB)/4, $0x3b21b0c1
DATA gelu_ah4<>+20(SB)/4, $0x3b21b0c1
DATA gelu_ah4<>+24(SB)/4, $0x3b21b0c1
DATA gelu_ah4<>+28(SB)/4, $0x3b21b0c1
GLOBL gelu_ah4<>(SB), RODATA|NOPTR, $32
DATA gelu_ah5<>+0(SB)/4, $0xb995523a
DATA gelu_ah5<>+4(SB)/4, $0xb995523a
DATA gelu_ah5<>+8(SB)/4, $0xb995523a
DATA gelu_ah5<>+12(SB)/4, $0xb995523a
DATA gelu_ah5<>+16(SB)/4, $0xb995523a
DATA gelu_ah5<>+20(SB)/4, $0xb995523a
DATA gelu_ah5<>+24(SB)/4, $0xb995523a
DATA gelu_ah5<>+28(SB)/4, $0xb995523a
GLOBL gelu_ah5<>(SB), RODATA|NOPTR, $32


// Φ(x) and e^(−x²/2) of 8 floats x in Y0, in four parts: GELU_Z, then
// GELU_EXP, GELU_ERFC and GELU_ERF as the lanes need them (see geluAVX2).
// Lanes whose x² exceeds gelu_xmax (|x| ≥ 12.949953, where Φ(x) of the
// kernels would be subnormal, below 2^-126) take e^(−x²/2) as 0 (masked)
// and evaluate the exponential at 0 rather than at their argument: every
// instruction that meets a subnormal costs a microcode assist of about
// 100 cycles on Intel CPUs, and the vectors of x in [−13.22, −12.95],
// whose Φ(x) (and, past −13.14, φ(x)) were subnormal, ran 11–19 times
// slower than others. So GELU(x) = x·0 = −0 and its derivative g·(0 + x·0)
// = g·(+0) for x ≤ −12.949953 (PyTorch 1.13's CPU kernels give +0 already
// below x ≈ −5.6, where its 1 + erf(x/√2) rounds to 0, and a derivative of
// 0 below x ≈ −6.15). −12.949952 is the last
// input whose Φ is normal on every path (the Go path's flush is the same,
// and TestGELUTailFlush checks the boundary). For positive x this changes
// nothing: lanes with x ≥ gelu_tailx (8) take e^(−x²/2)·t·B(t) as 0, since
// 1 − half rounds to 1 either way (and x·φ(x) vanishes beside Φ(x) = 1 in
// the derivative, which zeroes φ there too). No lane of the GELU kernels
// meets a subnormal unless its input or incoming gradient is one, or the
// product g·GELU'(x) is.
//
// The kernels are bound by their number of instructions more than by the
// latency of their chains (two vectors interleaved per iteration measured
// no faster on AVX-512), so a vector runs only the parts its lanes need,
// and the parts take few instructions; each rewrite below gives the bits
// of the plain formula,
// since a scaling by a power of 2 commutes with rounding (outside the
// subnormal range) and gelu_prev_amd64_test.go compares all 2^32 inputs
// with the previous kernels (bit for bit, but for the inputs x in
// [−13.216394, −12.949953] that the previous kernels did not flush):
//   - the flush test is x² > gelu_xmax, and the argument of the
//     rounding is x²·(−log2(e)/2) + 1/2, both taken from x² directly
//     rather than from −x²/2;
//   - 2^n comes from the float n + 2^23 + 127 shifted left by 23 (no
//     conversion to integers), and e = p·2^n + 2^n in one FMA rather than
//     (p + 1)·2^n (e is at least 2^-126, so no subnormal rounding);
//   - the erf polynomial has halved coefficients and takes the signed
//     z = x/√2, so z·A(z²)/2 comes out with its sign and halved (its
//     subnormal values, for |x| < 2^-124, vanish beside 1/2 either way);
//   - NaN lanes leave the clamp of −x²/2 out: their e is NaN (it was NaN
//     after the correction before), and the NaN that reaches Φ, x·Φ and
//     the derivative is still that of t·B(t), |x| quieted.

// GELU_Z leaves z = |x|/√2 in Y7, x/√2 in Y10, in Y1 the lanes that take
// the erfc approximation (z ≥ 1, or NaN) and in AX their sign bits.
#define GELU_Z \
	VMULPS gelu_invsqrt2<>(SB), Y0, Y10 \
	VANDPS gelu_absmask<>(SB), Y10, Y7 \
	VCMPPS $5, gelu_one<>(SB), Y7, Y1 \
	VMOVMSKPS Y1, AX

// GELU_EXPPOLY finishes e^(−x²/2) for GELU_EXP and GELU_EXPSMALL: from
// n = round(−x²/(2 ln 2)) in Y4, −x²/2 in Y1 and the rounding error of x²
// (halved) in Y2, it reduces the argument, evaluates the polynomial, scales
// by 2ⁿ and applies the correction, leaving e^(−x²/2) in Y6; it clobbers
// Y1, Y4, Y5, Y8 and Y11.
#define GELU_EXPPOLY \
	VFNMADD231PS gelu_c1<>(SB), Y4, Y1 \
	VFNMADD231PS gelu_c2<>(SB), Y4, Y1 \
	VMULPS Y1, Y1, Y5 \
	VMOVUPS gelu_p0<>(SB), Y6 \
	VFMADD213PS gelu_p1<>(SB), Y1, Y6 \
	VMOVUPS gelu_p2<>(SB), Y8 \
	VFMADD213PS gelu_p3<>(SB), Y1, Y8 \
	VMOVUPS gelu_p4<>(SB), Y11 \
	VFMADD213PS gelu_p5<>(SB), Y1, Y11 \
	VFMADD213PS Y8, Y5, Y6 \
	VFMADD213PS Y11, Y5, Y6 \
	VFMADD213PS Y1, Y5, Y6 \
	VADDPS gelu_magic<>(SB), Y4, Y4 \
	VPSLLD $23, Y4, Y4 \
	VFMADD213PS Y4, Y4, Y6 \
	VFNMADD231PS Y2, Y6, Y6

// GELU_EXP leaves e^(−x²/2) in Y6 (0 where x² > gelu_xmax); it clobbers
// Y1-Y5, Y8 and Y11.
#define GELU_EXP \
	VMULPS Y0, Y0, Y1 \
	VMOVAPS Y0, Y2 \
	VFMSUB213PS Y1, Y0, Y2 \
	VCMPPS $14, gelu_xmax<>(SB), Y1, Y3 \
	VANDNPS Y1, Y3, Y1 \
	VMOVUPS gelu_nhlog2e<>(SB), Y4 \
	VFMADD213PS gelu_half<>(SB), Y1, Y4 \
	VROUNDPS $1, Y4, Y4 \
	VMULPS gelu_neghalf<>(SB), Y1, Y1 \
	VMULPS gelu_half<>(SB), Y2, Y2 \
	GELU_EXPPOLY \
	VANDNPS Y6, Y3, Y6

// GELU_EXPSMALL is GELU_EXP for vectors whose lanes all have |x| < √2,
// where e^(−x²/2) is never flushed.
#define GELU_EXPSMALL \
	VMULPS Y0, Y0, Y1 \
	VMOVAPS Y0, Y2 \
	VFMSUB213PS Y1, Y0, Y2 \
	VMOVUPS gelu_nhlog2e<>(SB), Y4 \
	VFMADD213PS gelu_half<>(SB), Y1, Y4 \
	VROUNDPS $1, Y4, Y4 \
	VMULPS gelu_neghalf<>(SB), Y1, Y1 \
	VMULPS gelu_half<>(SB), Y2, Y2 \
	GELU_EXPPOLY

// GELU_ERFC leaves Φ(x) of the erfc approximation in Y11 and the lanes
// with x < gelu_tailx (or NaN) in Y12, from z in Y7 and e^(−x²/2) in Y6;
// it clobbers Y2-Y5, Y8 and Y13-Y15.
#define GELU_ERFC \
	VMOVUPS gelu_one<>(SB), Y8 \
	VFMADD231PS gelu_half<>(SB), Y7, Y8 \
	VMOVUPS gelu_one<>(SB), Y2 \
	VDIVPS Y8, Y2, Y8 \
	VMULPS Y8, Y8, Y15 \
	VMOVUPS gelu_b7<>(SB), Y2 \
	VFMADD213PS gelu_b6<>(SB), Y8, Y2 \
	VMOVUPS gelu_b5<>(SB), Y3 \
	VFMADD213PS gelu_b4<>(SB), Y8, Y3 \
	VMOVUPS gelu_b3<>(SB), Y13 \
	VFMADD213PS gelu_b2<>(SB), Y8, Y13 \
	VMOVUPS gelu_b1<>(SB), Y14 \
	VFMADD213PS gelu_b0<>(SB), Y8, Y14 \
	VFMADD213PS Y3, Y15, Y2 \
	VFMADD213PS Y14, Y15, Y13 \
	VMULPS Y15, Y15, Y15 \
	VFMADD213PS Y13, Y15, Y2 \
	VMULPS Y8, Y2, Y2 \
	VCMPPS $9, gelu_tailx<>(SB), Y0, Y12 \
	VANDPS Y12, Y2, Y2 \
	VMULPS Y6, Y2, Y2 \
	VMULPS gelu_half<>(SB), Y2, Y2 \
	VMOVUPS gelu_one<>(SB), Y11 \
	VSUBPS Y2, Y11, Y11 \
	VBLENDVPS Y0, Y2, Y11, Y11

// GELU_ERF leaves Φ(x) of the erf approximation in Y9, from x/√2 in Y10;
// it clobbers Y8 and Y13-Y15.
#define GELU_ERF \
	VMULPS Y10, Y10, Y8 \
	VMULPS Y8, Y8, Y15 \
	VMOVUPS gelu_ah5<>(SB), Y9 \
	VFMADD213PS gelu_ah4<>(SB), Y8, Y9 \
	VMOVUPS gelu_ah3<>(SB), Y13 \
	VFMADD213PS gelu_ah2<>(SB), Y8, Y13 \
	VMOVUPS gelu_ah1<>(SB), Y14 \
	VFMADD213PS gelu_ah0<>(SB), Y8, Y14 \
	VFMADD213PS Y13, Y15, Y9 \
	VFMADD213PS Y14, Y15, Y9 \
	VMULPS Y10, Y9, Y9 \
	VADDPS gelu_half<>(SB), Y9, Y9

// func geluAVX2(dst, x *float32, n int)
// dst[i] = x[i]·Φ(x[i]) for n (a multiple of 8) elements. A vector whose
// lanes all have |x| < √2 (most of them where activations are small, as in
// a freshly initialised network) needs neither the exponential nor the
// erfc approximation; one whose lanes all have |x| ≥ √2 skips the erf
// polynomial and the blend.
TEXT ·geluAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   fwddone
fwdloop:
	VMOVUPS (SI), Y0
	GELU_Z
	TESTL AX, AX
	JZ   fwdsmall
	GELU_EXP
	GELU_ERFC
	CMPL AX, $0xff
	JEQ  fwdlarge
	GELU_ERF
	VCMPPS $5, gelu_one<>(SB), Y7, Y1
	VBLENDVPS Y1, Y11, Y9, Y9
fwdstore:
	VMULPS Y0, Y9, Y9
	VMOVUPS Y9, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  fwdloop
fwddone:
	VZEROUPPER
	RET
fwdlarge:
	VMOVAPS Y11, Y9
	JMP  fwdstore
fwdsmall:
	GELU_ERF
	JMP  fwdstore

// func geluGradAVX2(dst, gr, x *float32, n int)
// dst[i] = gr[i]·(Φ(x[i]) + x[i]·φ(x[i])) for n (a multiple of 8) elements,
// with geluAVX2's choice of approximations per vector (where all lanes have
// |x| < √2, all are below gelu_tailx too).
TEXT ·geluGradAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ gr+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   bwddone
bwdloop:
	VMOVUPS (SI), Y0
	GELU_Z
	TESTL AX, AX
	JZ   bwdsmall
	GELU_EXP
	GELU_ERFC
	VANDPS Y6, Y12, Y6
	CMPL AX, $0xff
	JEQ  bwdlarge
	GELU_ERF
	VCMPPS $5, gelu_one<>(SB), Y7, Y1
	VBLENDVPS Y1, Y11, Y9, Y9
bwdstore:
	VMULPS gelu_invsqrt2pi<>(SB), Y6, Y6
	VFMADD231PS Y0, Y6, Y9
	VMULPS (DX), Y9, Y9
	VMOVUPS Y9, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ  bwdloop
bwddone:
	VZEROUPPER
	RET
bwdlarge:
	VMOVAPS Y11, Y9
	JMP  bwdstore
bwdsmall:
	GELU_EXPSMALL
	GELU_ERF
	JMP  bwdstore

// func maxAVX2(x *float32, n int) float32
// The largest of n (a positive multiple of 8) elements, or NaN if one is NaN.
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y1
	VXORPS Y2, Y2, Y2
	SHRQ $3, CX
maxloop:
	VMOVUPS (SI), Y3
	VCMPPS $3, Y3, Y3, Y4 // unordered: NaN lanes
	VORPS Y4, Y2, Y2
	VMAXPS Y3, Y0, Y0
	ADDQ $32, SI
	DECQ CX
	JNZ  maxloop
	VPTEST Y2, Y2
	JNZ  maxnan
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0
	MOVSS X0, ret+16(FP)
	VZEROUPPER
	RET
maxnan:
	MOVL $0x7fc00000, AX
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET

// EXP8 leaves e^x in Y6 for x in Y1 (Exp32's method: NaN stays NaN,
// arguments below −87.3 give 0), with gelu_minarg in Y13; it clobbers Y1,
// Y3-Y5 and Y7. The lanes below −87.3 are computed from 0 and cleared at
// the end: computed from −87.3 (clamped), their intermediate p·2^-126 was
// subnormal, and each such vector cost a microcode assist (masked rows of
// causal attention, all −Inf, ran 1.8× slower for it on a Sapphire Rapids
// Xeon).
#define EXP8 \
	VCMPPS $1, Y13, Y1, Y3 \
	VANDNPS Y1, Y3, Y1 \
	VMOVUPS gelu_log2e<>(SB), Y4 \
	VFMADD213PS gelu_half<>(SB), Y1, Y4 \
	VROUNDPS $1, Y4, Y4 \
	VMOVAPS Y1, Y5 \
	VFNMADD231PS gelu_c1<>(SB), Y4, Y5 \
	VFNMADD231PS gelu_c2<>(SB), Y4, Y5 \
	VMOVUPS gelu_p0<>(SB), Y6 \
	VFMADD213PS gelu_p1<>(SB), Y5, Y6 \
	VFMADD213PS gelu_p2<>(SB), Y5, Y6 \
	VFMADD213PS gelu_p3<>(SB), Y5, Y6 \
	VFMADD213PS gelu_p4<>(SB), Y5, Y6 \
	VFMADD213PS gelu_p5<>(SB), Y5, Y6 \
	VMULPS Y5, Y5, Y7 \
	VFMADD213PS Y5, Y7, Y6 \
	VADDPS gelu_one<>(SB), Y6, Y6 \
	VCVTPS2DQ Y4, Y4 \
	VPSLLD $23, Y4, Y4 \
	VPADDD gelu_bias<>(SB), Y4, Y4 \
	VMULPS Y4, Y6, Y6 \
	VANDNPS Y6, Y3, Y6

// SUM8 adds the lanes of Y8 into the low lane of X8 (clobbering X9).
#define SUM8 \
	VEXTRACTF128 $1, Y8, X9 \
	VADDPS X9, X8, X8 \
	VHADDPS X8, X8, X8 \
	VHADDPS X8, X8, X8

// sm_maxarg is 3.4e38 (float32), the largest maximum softmaxRowScaled
// subtracts.
DATA sm_maxarg<>+0(SB)/4, $0x7f7fc99e
GLOBL sm_maxarg<>(SB), RODATA|NOPTR, $4

// func expSubToAVX2(dst, x *float32, n int, m float32) (sum float32)
// dst[i] = e^(x[i]−m) for n (a multiple of 8) elements (Exp32's method; NaN
// stays NaN, arguments below −87.3 give 0); dst may be x. Returns the sum of
// the results.
TEXT ·expSubToAVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y14
	VMOVUPS gelu_minarg<>(SB), Y13
	VXORPS Y8, Y8, Y8
	SHRQ $3, CX
	JZ   exptodone
exptoloop:
	VMOVUPS (SI), Y1
	VSUBPS Y14, Y1, Y1
	EXP8
	VMOVUPS Y6, (DI)
	VADDPS Y6, Y8, Y8
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  exptoloop
exptodone:
	SUM8
	MOVSS X8, sum+32(FP)
	VZEROUPPER
	RET

// func softmaxScaledAVX2(x *float32, n int, scale float32)
// x[i] = softmax(x·scale)[i] for n (a positive multiple of 8) elements:
// SoftmaxScaled's Scale, Max, ExpSub and Scale by the
// reciprocal of the sum, in one call. Each pass is the AVX2 kernel's
// (scaleAVX2, maxAVX2, expSubToAVX2), in its order, so the row comes out
// bit for bit as the four calls leave it on the AVX2 path; the maximum is
// taken as 0 where it is NaN or beyond ±3.4e38, as softmaxRowScaled does.
TEXT ·softmaxScaledAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y15
	SHRQ $3, CX
	JZ   smdone
	MOVQ SI, DI
	MOVQ CX, DX
	VMULPS (SI), Y15, Y0
	VMOVUPS Y0, (SI)
	VMOVAPS Y0, Y9
	VCMPPS $3, Y0, Y0, Y10 // unordered: NaN lanes
	JMP  smscalenext
smscale:
	VMULPS (SI), Y15, Y0
	VMOVUPS Y0, (SI)
	VCMPPS $3, Y0, Y0, Y1
	VORPS Y1, Y10, Y10
	VMAXPS Y0, Y9, Y9
smscalenext:
	ADDQ $32, SI
	DECQ CX
	JNZ  smscale
	VEXTRACTF128 $1, Y9, X1
	VMAXPS X1, X9, X9
	VPERMILPS $0x4e, X9, X1
	VMAXPS X1, X9, X9
	VPERMILPS $0xb1, X9, X1
	VMAXPS X1, X9, X9
	VXORPS X0, X0, X0
	VPTEST Y10, Y10
	JNZ  smzero // a NaN: the maximum is taken as 0
	VANDPS gelu_absmask<>(SB), X9, X1
	VUCOMISS sm_maxarg<>(SB), X1
	JA   smzero // beyond ±3.4e38 (±Inf among them)
	VMOVAPS X9, X0
smzero:
	VBROADCASTSS X0, Y14
	VMOVUPS gelu_minarg<>(SB), Y13
	VXORPS Y8, Y8, Y8
	MOVQ DI, SI
	MOVQ DX, CX
smexp:
	VMOVUPS (SI), Y1
	VSUBPS Y14, Y1, Y1
	EXP8
	VMOVUPS Y6, (SI)
	VADDPS Y6, Y8, Y8
	ADDQ $32, SI
	DECQ CX
	JNZ  smexp
	SUM8
	VMOVSS gelu_one<>(SB), X1
	VDIVSS X8, X1, X1
	VBROADCASTSS X1, Y15
smnorm:
	VMULPS (DI), Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ DX
	JNZ  smnorm
smdone:
	VZEROUPPER
	RET

// AVX-512 versions of the kernels above, 16 lanes at a time: the same
// operations in the same order (so each lane's result is the AVX2 kernel's
// bit for bit), with opmask registers where the AVX2 code blends on vector
// masks, and the constants above read with embedded broadcasts.

// GELU_Z16, GELU_EXP16, GELU_ERFC16 and GELU_ERF16 are GELU_Z, GELU_EXP,
// GELU_ERFC and GELU_ERF on 16 lanes, with the same registers (Z for Y),
// opmasks where those blend (GELU_Z16's lanes in K4 and AX, the tail lanes
// in K2) and the constants read with embedded broadcasts. GELU_EXP16's
// zero-masked FMA and product give the flushed lanes n = 0 and
// −x²/2 = 0; it clobbers K1, GELU_ERFC16 K2 and K3.
#define GELU_Z16 \
	VMULPS.BCST gelu_invsqrt2<>(SB), Z0, Z10 \
	VANDPS.BCST gelu_absmask<>(SB), Z10, Z7 \
	VCMPPS.BCST $5, gelu_one<>(SB), Z7, K4 \
	KMOVW K4, AX

// GELU_EXPPOLY16 is GELU_EXPPOLY on 16 lanes.
#define GELU_EXPPOLY16 \
	VFNMADD231PS.BCST gelu_c1<>(SB), Z4, Z1 \
	VFNMADD231PS.BCST gelu_c2<>(SB), Z4, Z1 \
	VMULPS Z1, Z1, Z5 \
	VBROADCASTSS gelu_p0<>(SB), Z6 \
	VFMADD213PS.BCST gelu_p1<>(SB), Z1, Z6 \
	VBROADCASTSS gelu_p2<>(SB), Z8 \
	VFMADD213PS.BCST gelu_p3<>(SB), Z1, Z8 \
	VBROADCASTSS gelu_p4<>(SB), Z11 \
	VFMADD213PS.BCST gelu_p5<>(SB), Z1, Z11 \
	VFMADD213PS Z8, Z5, Z6 \
	VFMADD213PS Z11, Z5, Z6 \
	VFMADD213PS Z1, Z5, Z6 \
	VADDPS.BCST gelu_magic<>(SB), Z4, Z4 \
	VPSLLD $23, Z4, Z4 \
	VFMADD213PS Z4, Z4, Z6 \
	VFNMADD231PS Z2, Z6, Z6

#define GELU_EXP16 \
	VMULPS Z0, Z0, Z1 \
	VMOVAPS Z0, Z2 \
	VFMSUB213PS Z1, Z0, Z2 \
	VCMPPS.BCST $10, gelu_xmax<>(SB), Z1, K1 \
	VBROADCASTSS gelu_nhlog2e<>(SB), Z4 \
	VFMADD213PS.BCST.Z gelu_half<>(SB), Z1, K1, Z4 \
	VRNDSCALEPS $1, Z4, Z4 \
	VMULPS.BCST.Z gelu_neghalf<>(SB), Z1, K1, Z1 \
	VMULPS.BCST gelu_half<>(SB), Z2, Z2 \
	GELU_EXPPOLY16 \
	VMOVAPS.Z Z6, K1, Z6

// GELU_EXPSMALL16 is GELU_EXPSMALL on 16 lanes.
#define GELU_EXPSMALL16 \
	VMULPS Z0, Z0, Z1 \
	VMOVAPS Z0, Z2 \
	VFMSUB213PS Z1, Z0, Z2 \
	VBROADCASTSS gelu_nhlog2e<>(SB), Z4 \
	VFMADD213PS.BCST gelu_half<>(SB), Z1, Z4 \
	VRNDSCALEPS $1, Z4, Z4 \
	VMULPS.BCST gelu_neghalf<>(SB), Z1, Z1 \
	VMULPS.BCST gelu_half<>(SB), Z2, Z2 \
	GELU_EXPPOLY16

#define GELU_ERFC16 \
	VBROADCASTSS gelu_one<>(SB), Z8 \
	VFMADD231PS.BCST gelu_half<>(SB), Z7, Z8 \
	VBROADCASTSS gelu_one<>(SB), Z2 \
	VDIVPS Z8, Z2, Z8 \
	VMULPS Z8, Z8, Z15 \
	VBROADCASTSS gelu_b7<>(SB), Z2 \
	VFMADD213PS.BCST gelu_b6<>(SB), Z8, Z2 \
	VBROADCASTSS gelu_b5<>(SB), Z3 \
	VFMADD213PS.BCST gelu_b4<>(SB), Z8, Z3 \
	VBROADCASTSS gelu_b3<>(SB), Z13 \
	VFMADD213PS.BCST gelu_b2<>(SB), Z8, Z13 \
	VBROADCASTSS gelu_b1<>(SB), Z14 \
	VFMADD213PS.BCST gelu_b0<>(SB), Z8, Z14 \
	VFMADD213PS Z3, Z15, Z2 \
	VFMADD213PS Z14, Z15, Z13 \
	VMULPS Z15, Z15, Z15 \
	VFMADD213PS Z13, Z15, Z2 \
	VCMPPS.BCST $9, gelu_tailx<>(SB), Z0, K2 \
	VMULPS.Z Z8, Z2, K2, Z2 \
	VMULPS Z6, Z2, Z2 \
	VMULPS.BCST gelu_half<>(SB), Z2, Z2 \
	VBROADCASTSS gelu_one<>(SB), Z11 \
	VSUBPS Z2, Z11, Z11 \
	VPMOVD2M Z0, K3 \
	VMOVAPS Z2, K3, Z11

#define GELU_ERF16 \
	VMULPS Z10, Z10, Z8 \
	VMULPS Z8, Z8, Z15 \
	VBROADCASTSS gelu_ah5<>(SB), Z9 \
	VFMADD213PS.BCST gelu_ah4<>(SB), Z8, Z9 \
	VBROADCASTSS gelu_ah3<>(SB), Z13 \
	VFMADD213PS.BCST gelu_ah2<>(SB), Z8, Z13 \
	VBROADCASTSS gelu_ah1<>(SB), Z14 \
	VFMADD213PS.BCST gelu_ah0<>(SB), Z8, Z14 \
	VFMADD213PS Z13, Z15, Z9 \
	VFMADD213PS Z14, Z15, Z9 \
	VMULPS Z10, Z9, Z9 \
	VADDPS.BCST gelu_half<>(SB), Z9, Z9

// func geluAVX512(dst, x *float32, n int)
// dst[i] = x[i]·Φ(x[i]) for n (a multiple of 16) elements, choosing the
// approximations per vector as geluAVX2 does.
TEXT ·geluAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   fwd16done
fwd16loop:
	VMOVUPS (SI), Z0
	GELU_Z16
	TESTL AX, AX
	JZ   fwd16small
	GELU_EXP16
	GELU_ERFC16
	CMPL AX, $0xffff
	JEQ  fwd16large
	GELU_ERF16
	VMOVAPS Z11, K4, Z9
fwd16store:
	VMULPS Z0, Z9, Z9
	VMOVUPS Z9, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  fwd16loop
fwd16done:
	VZEROUPPER
	RET
fwd16large:
	VMOVAPS Z11, Z9
	JMP  fwd16store
fwd16small:
	GELU_ERF16
	JMP  fwd16store

// func geluGradAVX512(dst, gr, x *float32, n int)
// dst[i] = gr[i]·(Φ(x[i]) + x[i]·φ(x[i])) for n (a multiple of 16) elements,
// as geluGradAVX2 does.
TEXT ·geluGradAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ gr+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   bwd16done
bwd16loop:
	VMOVUPS (SI), Z0
	GELU_Z16
	TESTL AX, AX
	JZ   bwd16small
	GELU_EXP16
	GELU_ERFC16
	VMOVAPS.Z Z6, K2, Z6
	CMPL AX, $0xffff
	JEQ  bwd16large
	GELU_ERF16
	VMOVAPS Z11, K4, Z9
bwd16store:
	VMULPS.BCST gelu_invsqrt2pi<>(SB), Z6, Z6
	VFMADD231PS Z0, Z6, Z9
	VMULPS (DX), Z9, Z9
	VMOVUPS Z9, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	DECQ CX
	JNZ  bwd16loop
bwd16done:
	VZEROUPPER
	RET
bwd16large:
	VMOVAPS Z11, Z9
	JMP  bwd16store
bwd16small:
	GELU_EXPSMALL16
	GELU_ERF16
	JMP  bwd16store

// func expSubToAVX512(dst, x *float32, n int, m float32) (sum float32)
// expSubToAVX2 for n (a multiple of 16) elements: each dst[i] is the AVX2
// kernel's bit for bit; the sum is taken over 16 lanes, so its rounding
// differs from the AVX2 kernel's.
TEXT ·expSubToAVX512(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Z14
	VBROADCASTSS gelu_minarg<>(SB), Z13
	VPXORD Z8, Z8, Z8
	SHRQ $4, CX
	JZ   expto16done
expto16loop:
	VMOVUPS (SI), Z1
	VSUBPS Z14, Z1, Z1
	VCMPPS $5, Z13, Z1, K1
	VMAXPS Z1, Z13, Z1
	VBROADCASTSS gelu_log2e<>(SB), Z4
	VFMADD213PS.BCST gelu_half<>(SB), Z1, Z4
	VRNDSCALEPS $1, Z4, Z4
	VMOVAPS Z1, Z5
	VFNMADD231PS.BCST gelu_c1<>(SB), Z4, Z5
	VFNMADD231PS.BCST gelu_c2<>(SB), Z4, Z5
	VBROADCASTSS gelu_p0<>(SB), Z6
	VFMADD213PS.BCST gelu_p1<>(SB), Z5, Z6
	VFMADD213PS.BCST gelu_p2<>(SB), Z5, Z6
	VFMADD213PS.BCST gelu_p3<>(SB), Z5, Z6
	VFMADD213PS.BCST gelu_p4<>(SB), Z5, Z6
	VFMADD213PS.BCST gelu_p5<>(SB), Z5, Z6
	VMULPS Z5, Z5, Z7
	VFMADD213PS Z5, Z7, Z6
	VADDPS.BCST gelu_one<>(SB), Z6, Z6
	VCVTPS2DQ Z4, Z4
	VPSLLD $23, Z4, Z4
	VPADDD.BCST gelu_bias<>(SB), Z4, Z4
	VMULPS Z4, Z6, Z6
	VMOVAPS.Z Z6, K1, Z6
	VMOVUPS Z6, (DI)
	VADDPS Z6, Z8, Z8
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  expto16loop
expto16done:
	VEXTRACTF32X8 $1, Z8, Y9
	VADDPS Y9, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VHADDPS X8, X8, X8
	VHADDPS X8, X8, X8
	MOVSS X8, sum+32(FP)
	VZEROUPPER
	RET

// func maxAVX512(x *float32, n int) float32
// maxAVX2 for n a positive multiple of 16: the largest element, or NaN if
// one is NaN (tracked in K2, since VMAXPS does not propagate it).
TEXT ·maxAVX512(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Z0
	KXORW K2, K2, K2
	SHRQ $4, CX
max16loop:
	VMOVUPS (SI), Z3
	VCMPPS $3, Z3, Z3, K1 // unordered: NaN lanes
	KORW K1, K2, K2
	VMAXPS Z3, Z0, Z0
	ADDQ $64, SI
	DECQ CX
	JNZ  max16loop
	KORTESTW K2, K2
	JNZ  max16nan
	VEXTRACTF32X8 $1, Z0, Y1
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0
	MOVSS X0, ret+16(FP)
	VZEROUPPER
	RET
max16nan:
	MOVL $0x7fc00000, AX
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET

// Kernels with one body for both widths. Each body below is a macro written
// over width-neutral names: V0-V15 are the vector registers (Y0-Y15 for
// AVX2, Z0-Z15 for AVX-512), VBYTES is a vector's size in bytes and VSHIFT
// the log2 of its float32 lanes; for the float64 arithmetic of LayerNorm,
// H0-H15 are the half-width registers that hold the float32 values of one
// float64 vector (X or Y), HBYTES their size, CVTPD2PS the conversion from a
// float64 vector to them, and REDUCEPD adds the float64 lanes of V0 into
// the low lane of X0 (clobbering V1). The two register banks are #defined in
// turn before each set of TEXT blocks, and the preprocessor expands a body
// with the bank in force where it is invoked, so the AVX2 and AVX-512
// kernels are the same instructions on registers of the two widths (and,
// for the float32 kernels, the AVX-512 lanes give the AVX2 results bit for
// bit; the float64 sums differ in the order of their additions). The labels
// inside the bodies are fixed names, which the assembler scopes to each
// TEXT block. The arguments are loaded in each TEXT block, outside the
// bodies, so that go vet checks their frame offsets against the Go
// declarations; a body ends in RET only where its kernel has no results.

// ARITH is the loop of the add, sub, mul and div kernels: DI[i] = SI[i] op
// DX[i] for CX elements (a multiple of the lanes), two vectors at a time
// after one single vector if the count of vectors is odd.
#define ARITH(op) \
	SHRQ $VSHIFT, CX \
	JZ   done \
	TESTQ $1, CX \
	JZ   pairs \
	VMOVUPS (SI), V0 \
	op (DX), V0, V0 \
	VMOVUPS V0, (DI) \
	ADDQ $VBYTES, SI \
	ADDQ $VBYTES, DX \
	ADDQ $VBYTES, DI \
	DECQ CX \
	JZ   done \
pairs: \
	SHRQ $1, CX \
loop: \
	VMOVUPS (SI), V0 \
	VMOVUPS VBYTES(SI), V1 \
	op (DX), V0, V0 \
	op VBYTES(DX), V1, V1 \
	VMOVUPS V0, (DI) \
	VMOVUPS V1, VBYTES(DI) \
	ADDQ $(2*VBYTES), SI \
	ADDQ $(2*VBYTES), DX \
	ADDQ $(2*VBYTES), DI \
	DECQ CX \
	JNZ  loop \
done: \
	VZEROUPPER \
	RET

// ARITHNT is ARITH with non-temporal stores, for outputs too large to stay
// in the caches (see arithF32): the stores go to memory without first
// reading the lines they fill, and DI must be aligned to the vector width.
// SFENCE orders them before whatever the caller does next.
#define ARITHNT(op) \
	SHRQ $VSHIFT, CX \
	JZ   done \
	TESTQ $1, CX \
	JZ   pairs \
	VMOVUPS (SI), V0 \
	op (DX), V0, V0 \
	VMOVNTPS V0, (DI) \
	ADDQ $VBYTES, SI \
	ADDQ $VBYTES, DX \
	ADDQ $VBYTES, DI \
	DECQ CX \
	JZ   done \
pairs: \
	SHRQ $1, CX \
loop: \
	VMOVUPS (SI), V0 \
	VMOVUPS VBYTES(SI), V1 \
	op (DX), V0, V0 \
	op VBYTES(DX), V1, V1 \
	VMOVNTPS V0, (DI) \
	VMOVNTPS V1, VBYTES(DI) \
	ADDQ $(2*VBYTES), SI \
	ADDQ $(2*VBYTES), DX \
	ADDQ $(2*VBYTES), DI \
	DECQ CX \
	JNZ  loop \
done: \
	SFENCE \
	VZEROUPPER \
	RET

// SCALE is the loop of the scale kernels: SI[i] *= V1 (k broadcast) for CX
// elements, a multiple of the lanes.
#define SCALE \
	SHRQ $VSHIFT, CX \
	JZ   done \
loop: \
	VMULPS (SI), V1, V0 \
	VMOVUPS V0, (SI) \
	ADDQ $VBYTES, SI \
	DECQ CX \
	JNZ  loop \
done: \
	VZEROUPPER \
	RET

// ADAMW is the AdamW kernels' body: PyTorch's update of the parameters at
// DI with the gradients at SI and the moments at DX and BX, for CX elements
// (a multiple of the lanes), with the scalars of the adamwConsts at AX. The
// float32 operations are cpuBackend.AdamW's loop's, in its order and without
// FMA, so the results are identical to it bit for bit.
#define ADAMW \
	VBROADCASTSS 0(AX), V8 \
	VBROADCASTSS 4(AX), V9 \
	VBROADCASTSS 8(AX), V10 \
	VBROADCASTSS 12(AX), V11 \
	VBROADCASTSS 16(AX), V12 \
	VBROADCASTSS 20(AX), V13 \
	VBROADCASTSS 24(AX), V14 \
	VBROADCASTSS 28(AX), V15 \
	SHRQ $VSHIFT, CX \
	JZ   done \
loop: \
	VMOVUPS (SI), V0 \
	VMULPS (DX), V8, V1 \
	VMULPS V0, V9, V4 \
	VADDPS V4, V1, V1 \
	VMOVUPS V1, (DX) \
	VMULPS (BX), V10, V2 \
	VMULPS V0, V0, V4 \
	VMULPS V11, V4, V4 \
	VADDPS V4, V2, V2 \
	VMOVUPS V2, (BX) \
	VSQRTPS V2, V5 \
	VDIVPS V12, V5, V5 \
	VADDPS V13, V5, V5 \
	VDIVPS V5, V1, V6 \
	VMULPS V6, V14, V6 \
	VMULPS (DI), V15, V3 \
	VSUBPS V6, V3, V3 \
	VMOVUPS V3, (DI) \
	ADDQ $VBYTES, SI \
	ADDQ $VBYTES, DX \
	ADDQ $VBYTES, BX \
	ADDQ $VBYTES, DI \
	DECQ CX \
	JNZ  loop \
done: \
	VZEROUPPER \
	RET

// SUMF64 is the body of the sumF64 kernels: Σ SI[i] over CX floats (a
// multiple of the lanes), each converted to float64 (exactly) and added in
// float64, in two chains; the sum is left in X0.
#define SUMF64 \
	VXORPD V2, V2, V2 \
	VXORPD V3, V3, V3 \
	SHRQ $VSHIFT, CX \
	JZ   done \
loop: \
	VCVTPS2PD (SI), V0 \
	VCVTPS2PD HBYTES(SI), V1 \
	VADDPD V0, V2, V2 \
	VADDPD V1, V3, V3 \
	ADDQ $VBYTES, SI \
	DECQ CX \
	JNZ  loop \
done: \
	VADDPD V3, V2, V0 \
	REDUCEPD \
	VZEROUPPER

// LNSQDEV is the body of the lnSqDev kernels: Σ (SI[i] − µ)² over CX floats
// (a multiple of the lanes) in float64, with µ broadcast in V14, in two
// chains (the square and the addition fused); the sum is left in X0.
#define LNSQDEV \
	VXORPD V2, V2, V2 \
	VXORPD V3, V3, V3 \
	SHRQ $VSHIFT, CX \
	JZ   done \
loop: \
	VCVTPS2PD (SI), V0 \
	VCVTPS2PD HBYTES(SI), V1 \
	VSUBPD V14, V0, V0 \
	VSUBPD V14, V1, V1 \
	VFMADD231PD V0, V0, V2 \
	VFMADD231PD V1, V1, V3 \
	ADDQ $VBYTES, SI \
	DECQ CX \
	JNZ  loop \
done: \
	VADDPD V3, V2, V0 \
	REDUCEPD \
	VZEROUPPER

// LNNORM is the body of the lnNorm kernels: DI[i] = float32((SI[i] −
// µ)·r)·DX[i] + BX[i] for CX floats (a multiple of the lanes), with µ and r
// broadcast in V14 and V15 and the subtraction and the product in float64,
// the float32 operations of layerNormFwdFast (so the same µ and r give its
// results bit for bit). BX = 0 means no bias.
#define LNNORM \
	SHRQ $VSHIFT, CX \
	JZ   done \
	TESTQ BX, BX \
	JZ   nobias \
loop: \
	VCVTPS2PD (SI), V0 \
	VCVTPS2PD HBYTES(SI), V1 \
	VSUBPD V14, V0, V0 \
	VSUBPD V14, V1, V1 \
	VMULPD V15, V0, V0 \
	VMULPD V15, V1, V1 \
	CVTPD2PS V0, H0 \
	CVTPD2PS V1, H1 \
	VMULPS (DX), H0, H0 \
	VMULPS HBYTES(DX), H1, H1 \
	VADDPS (BX), H0, H0 \
	VADDPS HBYTES(BX), H1, H1 \
	VMOVUPS H0, (DI) \
	VMOVUPS H1, HBYTES(DI) \
	ADDQ $VBYTES, SI \
	ADDQ $VBYTES, DX \
	ADDQ $VBYTES, BX \
	ADDQ $VBYTES, DI \
	DECQ CX \
	JNZ  loop \
	JMP  done \
nobias: \
	VCVTPS2PD (SI), V0 \
	VCVTPS2PD HBYTES(SI), V1 \
	VSUBPD V14, V0, V0 \
	VSUBPD V14, V1, V1 \
	VMULPD V15, V0, V0 \
	VMULPD V15, V1, V1 \
	CVTPD2PS V0, H0 \
	CVTPD2PS V1, H1 \
	VMULPS (DX), H0, H0 \
	VMULPS HBYTES(DX), H1, H1 \
	VMOVUPS H0, (DI) \
	VMOVUPS H1, HBYTES(DI) \
	ADDQ $VBYTES, SI \
	ADDQ $VBYTES, DX \
	ADDQ $VBYTES, DI \
	DECQ CX \
	JNZ  nobias \
done: \
	VZEROUPPER \
	RET

// LNGRADSUMS is the body of the lnGradSums kernels, the first sweep of
// LayerNorm's backward over a row: with x̂ = (SI[i] − µ)·r (µ, r broadcast in
// V14, V15) and ĝ = DX[i]·BX[i], all in float64, it sums ĝ and ĝ·x̂ over CX
// floats (a multiple of the lanes), each in two chains, leaving them in X13
// and X0; unless R8 is 0 it also adds DX[i]·x̂ to R8[i] and DX[i] to R9[i]
// (float64 arrays: the weight's and the bias's gradients).
#define LNGRADSUMS \
	VXORPD V8, V8, V8 \
	VXORPD V9, V9, V9 \
	VXORPD V10, V10, V10 \
	VXORPD V11, V11, V11 \
	SHRQ $VSHIFT, CX \
	JZ   done \
loop: \
	VCVTPS2PD (SI), V0 \
	VCVTPS2PD HBYTES(SI), V1 \
	VSUBPD V14, V0, V0 \
	VSUBPD V14, V1, V1 \
	VMULPD V15, V0, V0 \
	VMULPD V15, V1, V1 \
	VCVTPS2PD (DX), V2 \
	VCVTPS2PD HBYTES(DX), V3 \
	VCVTPS2PD (BX), V4 \
	VCVTPS2PD HBYTES(BX), V5 \
	VMULPD V2, V4, V4 \
	VMULPD V3, V5, V5 \
	VADDPD V4, V8, V8 \
	VADDPD V5, V10, V10 \
	VFMADD231PD V4, V0, V9 \
	VFMADD231PD V5, V1, V11 \
	TESTQ R8, R8 \
	JZ   next \
	VMOVUPD (R8), V6 \
	VMOVUPD VBYTES(R8), V7 \
	VFMADD231PD V2, V0, V6 \
	VFMADD231PD V3, V1, V7 \
	VMOVUPD V6, (R8) \
	VMOVUPD V7, VBYTES(R8) \
	VADDPD (R9), V2, V2 \
	VADDPD VBYTES(R9), V3, V3 \
	VMOVUPD V2, (R9) \
	VMOVUPD V3, VBYTES(R9) \
	ADDQ $(2*VBYTES), R8 \
	ADDQ $(2*VBYTES), R9 \
next: \
	ADDQ $VBYTES, SI \
	ADDQ $VBYTES, DX \
	ADDQ $VBYTES, BX \
	DECQ CX \
	JNZ  loop \
done: \
	VADDPD V10, V8, V0 \
	REDUCEPD \
	VMOVAPD X0, X13 \
	VADDPD V11, V9, V0 \
	REDUCEPD \
	VZEROUPPER

// LNGRADDX is the body of the lnGradDx kernels, the second sweep of
// LayerNorm's backward: DI[i] = float32(r·(ĝ − s1 − x̂·s2)) for CX floats (a
// multiple of the lanes), with x̂ and ĝ as in LNGRADSUMS and s1, s2, µ, r
// broadcast in V12-V15, in float64.
#define LNGRADDX \
	SHRQ $VSHIFT, CX \
	JZ   done \
loop: \
	VCVTPS2PD (SI), V0 \
	VCVTPS2PD HBYTES(SI), V1 \
	VSUBPD V14, V0, V0 \
	VSUBPD V14, V1, V1 \
	VMULPD V15, V0, V0 \
	VMULPD V15, V1, V1 \
	VCVTPS2PD (DX), V2 \
	VCVTPS2PD HBYTES(DX), V3 \
	VCVTPS2PD (BX), V4 \
	VCVTPS2PD HBYTES(BX), V5 \
	VMULPD V2, V4, V4 \
	VMULPD V3, V5, V5 \
	VSUBPD V12, V4, V4 \
	VSUBPD V12, V5, V5 \
	VFNMADD231PD V0, V13, V4 \
	VFNMADD231PD V1, V13, V5 \
	VMULPD V15, V4, V4 \
	VMULPD V15, V5, V5 \
	CVTPD2PS V4, H4 \
	CVTPD2PS V5, H5 \
	VMOVUPS H4, (DI) \
	VMOVUPS H5, HBYTES(DI) \
	ADDQ $VBYTES, SI \
	ADDQ $VBYTES, DX \
	ADDQ $VBYTES, BX \
	ADDQ $VBYTES, DI \
	DECQ CX \
	JNZ  loop \
done: \
	VZEROUPPER \
	RET

// DOTF64 is the body of the dotF64 kernels: Σ SI[i]·DX[i] over CX floats
// (a multiple of the lanes) in float64 (each product exact, fused into its
// addition), in two chains; the sum is left in X0.
#define DOTF64 \
	VXORPD V2, V2, V2 \
	VXORPD V3, V3, V3 \
	SHRQ $VSHIFT, CX \
	JZ   done \
loop: \
	VCVTPS2PD (SI), V0 \
	VCVTPS2PD HBYTES(SI), V1 \
	VCVTPS2PD (DX), V4 \
	VCVTPS2PD HBYTES(DX), V5 \
	VFMADD231PD V4, V0, V2 \
	VFMADD231PD V5, V1, V3 \
	ADDQ $VBYTES, SI \
	ADDQ $VBYTES, DX \
	DECQ CX \
	JNZ  loop \
done: \
	VADDPD V3, V2, V0 \
	REDUCEPD \
	VZEROUPPER

// SMGRAD is the body of the softmaxGrad kernels: DI[i] = SI[i]·(DX[i] − a)
// for CX floats (a multiple of the lanes), a broadcast in V15; the float32
// operations of softmaxGradRowFast.
#define SMGRAD \
	SHRQ $VSHIFT, CX \
	JZ   done \
loop: \
	VMOVUPS (DX), V0 \
	VSUBPS V15, V0, V0 \
	VMULPS (SI), V0, V0 \
	VMOVUPS V0, (DI) \
	ADDQ $VBYTES, SI \
	ADDQ $VBYTES, DX \
	ADDQ $VBYTES, DI \
	DECQ CX \
	JNZ  loop \
done: \
	VZEROUPPER \
	RET

// LOGSMGRAD is the body of the logSoftmaxGrad kernels: DI[i] = DX[i] −
// DI[i]·a for CX floats (a multiple of the lanes), a broadcast in V15; the
// float32 operations of softmaxGradRowFast for log-softmax.
#define LOGSMGRAD \
	SHRQ $VSHIFT, CX \
	JZ   done \
loop: \
	VMULPS (DI), V15, V0 \
	VMOVUPS (DX), V1 \
	VSUBPS V0, V1, V1 \
	VMOVUPS V1, (DI) \
	ADDQ $VBYTES, DX \
	ADDQ $VBYTES, DI \
	DECQ CX \
	JNZ  loop \
done: \
	VZEROUPPER \
	RET

// LOGSM is the body of the logSoftmax kernels: DI[i] = (SI[i] − m) − c for
// CX floats (a multiple of the lanes), m and c broadcast in V14 and V15;
// the float32 operations of softmaxRowFast for log-softmax.
#define LOGSM \
	SHRQ $VSHIFT, CX \
	JZ   done \
loop: \
	VMOVUPS (SI), V0 \
	VSUBPS V14, V0, V0 \
	VSUBPS V15, V0, V0 \
	VMOVUPS V0, (DI) \
	ADDQ $VBYTES, SI \
	ADDQ $VBYTES, DI \
	DECQ CX \
	JNZ  loop \
done: \
	VZEROUPPER \
	RET

// The AVX2 bank: 8 lanes, Y registers.
#define VBYTES 32
#define VSHIFT 3
#define V0 Y0
#define V1 Y1
#define V2 Y2
#define V3 Y3
#define V4 Y4
#define V5 Y5
#define V6 Y6
#define V7 Y7
#define V8 Y8
#define V9 Y9
#define V10 Y10
#define V11 Y11
#define V12 Y12
#define V13 Y13
#define V14 Y14
#define V15 Y15
#define H0 X0
#define H1 X1
#define H2 X2
#define H3 X3
#define H4 X4
#define H5 X5
#define H6 X6
#define H7 X7
#define H8 X8
#define H9 X9
#define H10 X10
#define H11 X11
#define H12 X12
#define H13 X13
#define H14 X14
#define H15 X15
#define HBYTES 16
#define CVTPD2PS VCVTPD2PSY
#define REDUCEPD \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPD X1, X0, X0 \
	VPERMILPD $1, X0, X1 \
	VADDSD X1, X0, X0

// func addAVX2(d, a, b *float32, n int)
// d[i] = a[i] + b[i] for n (a multiple of 8) elements.
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITH(VADDPS)

// func subAVX2(d, a, b *float32, n int)
// d[i] = a[i] - b[i] for n (a multiple of 8) elements.
TEXT ·subAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITH(VSUBPS)

// func mulAVX2(d, a, b *float32, n int)
// d[i] = a[i] * b[i] for n (a multiple of 8) elements.
TEXT ·mulAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITH(VMULPS)

// func divAVX2(d, a, b *float32, n int)
// d[i] = a[i] / b[i] for n (a multiple of 8) elements.
TEXT ·divAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITH(VDIVPS)

// func addNTAVX2(d, a, b *float32, n int)
// d[i] = a[i] + b[i] for n (a multiple of 8) elements, with d aligned
// to 32 bytes, by non-temporal stores.
TEXT ·addNTAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITHNT(VADDPS)

// func subNTAVX2(d, a, b *float32, n int)
// d[i] = a[i] - b[i] for n (a multiple of 8) elements, with d aligned
// to 32 bytes, by non-temporal stores.
TEXT ·subNTAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITHNT(VSUBPS)

// func mulNTAVX2(d, a, b *float32, n int)
// d[i] = a[i] * b[i] for n (a multiple of 8) elements, with d aligned
// to 32 bytes, by non-temporal stores.
TEXT ·mulNTAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITHNT(VMULPS)

// func divNTAVX2(d, a, b *float32, n int)
// d[i] = a[i] / b[i] for n (a multiple of 8) elements, with d aligned
// to 32 bytes, by non-temporal stores.
TEXT ·divNTAVX2(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITHNT(VDIVPS)

// func scaleAVX2(x *float32, n int, k float32)
// x[i] *= k for n (a multiple of 8) elements.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS k+16(FP), V1
	SCALE

// func adamwAVX2(p, gr, m, v *float32, n int, c *adamwConsts)
// AdamW's update for n (a multiple of 8) elements; see ADAMW.
TEXT ·adamwAVX2(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), AX
	ADAMW

// func sumF64AVX2(x *float32, n int) float64
// Σ x[i] in float64 for n (a multiple of 8) elements.
TEXT ·sumF64AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SUMF64
	MOVSD X0, ret+16(FP)
	RET

// func lnSqDevAVX2(x *float32, n int, mu float64) float64
// Σ (x[i] − mu)² in float64 for n (a multiple of 8) elements.
TEXT ·lnSqDevAVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSD mu+16(FP), V14
	LNSQDEV
	MOVSD X0, ret+24(FP)
	RET

// func lnNormAVX2(dst, x, w, b *float32, n int, mu, r float64)
// dst[i] = float32((x[i] − mu)·r)·w[i] + b[i] for n (a multiple of 8)
// elements; b may be nil.
TEXT ·lnNormAVX2(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ b+24(FP), BX
	MOVQ n+32(FP), CX
	VBROADCASTSD mu+40(FP), V14
	VBROADCASTSD r+48(FP), V15
	LNNORM

// func lnGradSumsAVX2(gr, x, w *float32, n int, mu, r float64, accW, accB *float64) (s1, s2 float64)
// LayerNorm's backward row sums for n (a multiple of 8) elements; see
// LNGRADSUMS. accW and accB are both nil or both not.
TEXT ·lnGradSumsAVX2(SB), NOSPLIT, $0-80
	MOVQ gr+0(FP), DX
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), BX
	MOVQ n+24(FP), CX
	VBROADCASTSD mu+32(FP), V14
	VBROADCASTSD r+40(FP), V15
	MOVQ accW+48(FP), R8
	MOVQ accB+56(FP), R9
	LNGRADSUMS
	MOVSD X13, s1+64(FP)
	MOVSD X0, s2+72(FP)
	RET

// func lnGradDxAVX2(dx, gr, x, w *float32, n int, mu, r, s1, s2 float64)
// dx[i] = float32(r·(gr[i]·w[i] − s1 − (x[i] − mu)·r·s2)) for n (a multiple
// of 8) elements.
TEXT ·lnGradDxAVX2(SB), NOSPLIT, $0-72
	MOVQ dx+0(FP), DI
	MOVQ gr+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ w+24(FP), BX
	MOVQ n+32(FP), CX
	VBROADCASTSD mu+40(FP), V14
	VBROADCASTSD r+48(FP), V15
	VBROADCASTSD s1+56(FP), V12
	VBROADCASTSD s2+64(FP), V13
	LNGRADDX

// func dotF64AVX2(a, b *float32, n int) float64
// Σ a[i]·b[i] in float64 for n (a multiple of 8) elements.
TEXT ·dotF64AVX2(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ n+16(FP), CX
	DOTF64
	MOVSD X0, ret+24(FP)
	RET

// func softmaxGradRowAVX2(d, p *float32, n int, scale float32)
// d[i] = p[i]·(d[i] − a)·scale with a = Σ d[i]·p[i] (dotF64AVX2's sum,
// rounded to float32) for n (a multiple of 8) elements: SoftmaxGradScaled's
// DotF64, SoftmaxGradOut and Scale in one call, each the AVX2 kernel's
// operations in its order.
TEXT ·softmaxGradRowAVX2(SB), NOSPLIT, $0-28
	MOVQ d+0(FP), SI
	MOVQ p+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ SI, DI
	MOVQ DX, BX
	MOVQ CX, R8
	DOTF64
	VCVTSD2SS X0, X0, X0
	VBROADCASTSS X0, Y15
	VBROADCASTSS scale+24(FP), Y14
	SHRQ $3, R8
	JZ   sgdone
sgloop:
	VMOVUPS (DI), Y0
	VSUBPS Y15, Y0, Y0
	VMULPS (BX), Y0, Y0
	VMULPS Y14, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, BX
	ADDQ $32, DI
	DECQ R8
	JNZ  sgloop
sgdone:
	VZEROUPPER
	RET

// func softmaxGradAVX2(d, y, gr *float32, n int, a float32)
// d[i] = y[i]·(gr[i] − a) for n (a multiple of 8) elements.
TEXT ·softmaxGradAVX2(SB), NOSPLIT, $0-36
	MOVQ d+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ gr+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS a+32(FP), V15
	SMGRAD

// func logSoftmaxGradAVX2(d, gr *float32, n int, a float32)
// d[i] = gr[i] − d[i]·a for n (a multiple of 8) elements.
TEXT ·logSoftmaxGradAVX2(SB), NOSPLIT, $0-28
	MOVQ d+0(FP), DI
	MOVQ gr+8(FP), DX
	MOVQ n+16(FP), CX
	VBROADCASTSS a+24(FP), V15
	LOGSMGRAD

// func logSoftmaxAVX2(y, x *float32, n int, m, c float32)
// y[i] = (x[i] − m) − c for n (a multiple of 8) elements.
TEXT ·logSoftmaxAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), V14
	VBROADCASTSS c+28(FP), V15
	LOGSM

// The AVX-512 bank: 16 lanes, Z registers.
#undef VBYTES
#undef VSHIFT
#undef V0
#undef V1
#undef V2
#undef V3
#undef V4
#undef V5
#undef V6
#undef V7
#undef V8
#undef V9
#undef V10
#undef V11
#undef V12
#undef V13
#undef V14
#undef V15
#undef H0
#undef H1
#undef H2
#undef H3
#undef H4
#undef H5
#undef H6
#undef H7
#undef H8
#undef H9
#undef H10
#undef H11
#undef H12
#undef H13
#undef H14
#undef H15
#undef HBYTES
#undef CVTPD2PS
#undef REDUCEPD
#define VBYTES 64
#define VSHIFT 4
#define V0 Z0
#define V1 Z1
#define V2 Z2
#define V3 Z3
#define V4 Z4
#define V5 Z5
#define V6 Z6
#define V7 Z7
#define V8 Z8
#define V9 Z9
#define V10 Z10
#define V11 Z11
#define V12 Z12
#define V13 Z13
#define V14 Z14
#define V15 Z15
#define H0 Y0
#define H1 Y1
#define H2 Y2
#define H3 Y3
#define H4 Y4
#define H5 Y5
#define H6 Y6
#define H7 Y7
#define H8 Y8
#define H9 Y9
#define H10 Y10
#define H11 Y11
#define H12 Y12
#define H13 Y13
#define H14 Y14
#define H15 Y15
#define HBYTES 32
#define CVTPD2PS VCVTPD2PS
#define REDUCEPD \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPD Y1, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPD X1, X0, X0 \
	VPERMILPD $1, X0, X1 \
	VADDSD X1, X0, X0

// func addAVX512(d, a, b *float32, n int)
// d[i] = a[i] + b[i] for n (a multiple of 16) elements.
TEXT ·addAVX512(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITH(VADDPS)

// func subAVX512(d, a, b *float32, n int)
// d[i] = a[i] - b[i] for n (a multiple of 16) elements.
TEXT ·subAVX512(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITH(VSUBPS)

// func mulAVX512(d, a, b *float32, n int)
// d[i] = a[i] * b[i] for n (a multiple of 16) elements.
TEXT ·mulAVX512(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITH(VMULPS)

// func divAVX512(d, a, b *float32, n int)
// d[i] = a[i] / b[i] for n (a multiple of 16) elements.
TEXT ·divAVX512(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITH(VDIVPS)

// func addNTAVX512(d, a, b *float32, n int)
// d[i] = a[i] + b[i] for n (a multiple of 16) elements, with d aligned
// to 64 bytes, by non-temporal stores.
TEXT ·addNTAVX512(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITHNT(VADDPS)

// func subNTAVX512(d, a, b *float32, n int)
// d[i] = a[i] - b[i] for n (a multiple of 16) elements, with d aligned
// to 64 bytes, by non-temporal stores.
TEXT ·subNTAVX512(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITHNT(VSUBPS)

// func mulNTAVX512(d, a, b *float32, n int)
// d[i] = a[i] * b[i] for n (a multiple of 16) elements, with d aligned
// to 64 bytes, by non-temporal stores.
TEXT ·mulNTAVX512(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITHNT(VMULPS)

// func divNTAVX512(d, a, b *float32, n int)
// d[i] = a[i] / b[i] for n (a multiple of 16) elements, with d aligned
// to 64 bytes, by non-temporal stores.
TEXT ·divNTAVX512(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ARITHNT(VDIVPS)

// func scaleAVX512(x *float32, n int, k float32)
// x[i] *= k for n (a multiple of 16) elements.
TEXT ·scaleAVX512(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS k+16(FP), V1
	SCALE

// func adamwAVX512(p, gr, m, v *float32, n int, c *adamwConsts)
// AdamW's update for n (a multiple of 16) elements; see ADAMW.
TEXT ·adamwAVX512(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), AX
	ADAMW

// func sumF64AVX512(x *float32, n int) float64
// Σ x[i] in float64 for n (a multiple of 16) elements.
TEXT ·sumF64AVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SUMF64
	MOVSD X0, ret+16(FP)
	RET

// func lnSqDevAVX512(x *float32, n int, mu float64) float64
// Σ (x[i] − mu)² in float64 for n (a multiple of 16) elements.
TEXT ·lnSqDevAVX512(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSD mu+16(FP), V14
	LNSQDEV
	MOVSD X0, ret+24(FP)
	RET

// func lnNormAVX512(dst, x, w, b *float32, n int, mu, r float64)
// dst[i] = float32((x[i] − mu)·r)·w[i] + b[i] for n (a multiple of 16)
// elements; b may be nil.
TEXT ·lnNormAVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ b+24(FP), BX
	MOVQ n+32(FP), CX
	VBROADCASTSD mu+40(FP), V14
	VBROADCASTSD r+48(FP), V15
	LNNORM

// func lnGradSumsAVX512(gr, x, w *float32, n int, mu, r float64, accW, accB *float64) (s1, s2 float64)
// LayerNorm's backward row sums for n (a multiple of 16) elements; see
// LNGRADSUMS. accW and accB are both nil or both not.
TEXT ·lnGradSumsAVX512(SB), NOSPLIT, $0-80
	MOVQ gr+0(FP), DX
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), BX
	MOVQ n+24(FP), CX
	VBROADCASTSD mu+32(FP), V14
	VBROADCASTSD r+40(FP), V15
	MOVQ accW+48(FP), R8
	MOVQ accB+56(FP), R9
	LNGRADSUMS
	MOVSD X13, s1+64(FP)
	MOVSD X0, s2+72(FP)
	RET

// func lnGradDxAVX512(dx, gr, x, w *float32, n int, mu, r, s1, s2 float64)
// dx[i] = float32(r·(gr[i]·w[i] − s1 − (x[i] − mu)·r·s2)) for n (a multiple
// of 16) elements.
TEXT ·lnGradDxAVX512(SB), NOSPLIT, $0-72
	MOVQ dx+0(FP), DI
	MOVQ gr+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ w+24(FP), BX
	MOVQ n+32(FP), CX
	VBROADCASTSD mu+40(FP), V14
	VBROADCASTSD r+48(FP), V15
	VBROADCASTSD s1+56(FP), V12
	VBROADCASTSD s2+64(FP), V13
	LNGRADDX

// func dotF64AVX512(a, b *float32, n int) float64
// Σ a[i]·b[i] in float64 for n (a multiple of 16) elements.
TEXT ·dotF64AVX512(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ n+16(FP), CX
	DOTF64
	MOVSD X0, ret+24(FP)
	RET

// func softmaxGradAVX512(d, y, gr *float32, n int, a float32)
// d[i] = y[i]·(gr[i] − a) for n (a multiple of 16) elements.
TEXT ·softmaxGradAVX512(SB), NOSPLIT, $0-36
	MOVQ d+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ gr+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS a+32(FP), V15
	SMGRAD

// func logSoftmaxGradAVX512(d, gr *float32, n int, a float32)
// d[i] = gr[i] − d[i]·a for n (a multiple of 16) elements.
TEXT ·logSoftmaxGradAVX512(SB), NOSPLIT, $0-28
	MOVQ d+0(FP), DI
	MOVQ gr+8(FP), DX
	MOVQ n+16(FP), CX
	VBROADCASTSS a+24(FP), V15
	LOGSMGRAD

// func logSoftmaxAVX512(y, x *float32, n int, m, c float32)
// y[i] = (x[i] − m) − c for n (a multiple of 16) elements.
TEXT ·logSoftmaxAVX512(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), V14
	VBROADCASTSS c+28(FP), V15
	LOGSM

// Tanh and Sigmoid over the float32 range, in float64: each float32 lane
// is widened, e^u (e^u − 1 for tanh) is computed in float64 to about 2 ulp
// of float64, the function finished in float64 and rounded once to
// float32, as the Go reference does with math.Tanh and math.Exp: the
// result can differ from the reference's only for an argument whose value
// lies within a few float64 ulp of a float32 rounding boundary, and then
// by 1 ulp (over all 2³² float32 inputs none did; TestUnaryKernelsULP
// with -unary.exhaustive).
//
// e^u: u is clamped to [−110, 110] (NaN passes the clamp: the argument is
// the second source of VMAXPD/VMINPD), n = round(u/ln 2) by the 1.5·2⁵²
// shifter, r = u − n·ln 2 in two FMAs (|r| ≤ ln 2/2), e^r by its Taylor
// polynomial of degree 12 (remainder below 2.5e-16), and 2ⁿ added into
// the exponent field. Every e^u with u in the clamp range is a normal
// float64; outside the float32 range the final rounding gives +Inf or 0.
DATA vexp_min<>+0(SB)/8, $0xc05b800000000000
DATA vexp_min<>+8(SB)/8, $0xc05b800000000000
DATA vexp_min<>+16(SB)/8, $0xc05b800000000000
DATA vexp_min<>+24(SB)/8, $0xc05b800000000000
DATA vexp_min<>+32(SB)/8, $0xc05b800000000000
DATA vexp_min<>+40(SB)/8, $0xc05b800000000000
DATA vexp_min<>+48(SB)/8, $0xc05b800000000000
DATA vexp_min<>+56(SB)/8, $0xc05b800000000000
GLOBL vexp_min<>(SB), RODATA|NOPTR, $64
DATA vexp_max<>+0(SB)/8, $0x405b800000000000
DATA vexp_max<>+8(SB)/8, $0x405b800000000000
DATA vexp_max<>+16(SB)/8, $0x405b800000000000
DATA vexp_max<>+24(SB)/8, $0x405b800000000000
DATA vexp_max<>+32(SB)/8, $0x405b800000000000
DATA vexp_max<>+40(SB)/8, $0x405b800000000000
DATA vexp_max<>+48(SB)/8, $0x405b800000000000
DATA vexp_max<>+56(SB)/8, $0x405b800000000000
GLOBL vexp_max<>(SB), RODATA|NOPTR, $64
DATA vexp_log2e<>+0(SB)/8, $0x3ff71547652b82fe
DATA vexp_log2e<>+8(SB)/8, $0x3ff71547652b82fe
DATA vexp_log2e<>+16(SB)/8, $0x3ff71547652b82fe
DATA vexp_log2e<>+24(SB)/8, $0x3ff71547652b82fe
DATA vexp_log2e<>+32(SB)/8, $0x3ff71547652b82fe
DATA vexp_log2e<>+40(SB)/8, $0x3ff71547652b82fe
DATA vexp_log2e<>+48(SB)/8, $0x3ff71547652b82fe
DATA vexp_log2e<>+56(SB)/8, $0x3ff71547652b82fe
GLOBL vexp_log2e<>(SB), RODATA|NOPTR, $64
DATA vexp_shift<>+0(SB)/8, $0x4338000000000000
DATA vexp_shift<>+8(SB)/8, $0x4338000000000000
DATA vexp_shift<>+16(SB)/8, $0x4338000000000000
DATA vexp_shift<>+24(SB)/8, $0x4338000000000000
DATA vexp_shift<>+32(SB)/8, $0x4338000000000000
DATA vexp_shift<>+40(SB)/8, $0x4338000000000000
DATA vexp_shift<>+48(SB)/8, $0x4338000000000000
DATA vexp_shift<>+56(SB)/8, $0x4338000000000000
GLOBL vexp_shift<>(SB), RODATA|NOPTR, $64
DATA vexp_ln2hi<>+0(SB)/8, $0x3fe62e42fefa39ef
DATA vexp_ln2hi<>+8(SB)/8, $0x3fe62e42fefa39ef
DATA vexp_ln2hi<>+16(SB)/8, $0x3fe62e42fefa39ef
DATA vexp_ln2hi<>+24(SB)/8, $0x3fe62e42fefa39ef
DATA vexp_ln2hi<>+32(SB)/8, $0x3fe62e42fefa39ef
DATA vexp_ln2hi<>+40(SB)/8, $0x3fe62e42fefa39ef
DATA vexp_ln2hi<>+48(SB)/8, $0x3fe62e42fefa39ef
DATA vexp_ln2hi<>+56(SB)/8, $0x3fe62e42fefa39ef
GLOBL vexp_ln2hi<>(SB), RODATA|NOPTR, $64
DATA vexp_ln2lo<>+0(SB)/8, $0x3c7abc9e3b39803f
DATA vexp_ln2lo<>+8(SB)/8, $0x3c7abc9e3b39803f
DATA vexp_ln2lo<>+16(SB)/8, $0x3c7abc9e3b39803f
DATA vexp_ln2lo<>+24(SB)/8, $0x3c7abc9e3b39803f
DATA vexp_ln2lo<>+32(SB)/8, $0x3c7abc9e3b39803f
DATA vexp_ln2lo<>+40(SB)/8, $0x3c7abc9e3b39803f
DATA vexp_ln2lo<>+48(SB)/8, $0x3c7abc9e3b39803f
DATA vexp_ln2lo<>+56(SB)/8, $0x3c7abc9e3b39803f
GLOBL vexp_ln2lo<>(SB), RODATA|NOPTR, $64
DATA vexp_one<>+0(SB)/8, $0x3ff0000000000000
DATA vexp_one<>+8(SB)/8, $0x3ff0000000000000
DATA vexp_one<>+16(SB)/8, $0x3ff0000000000000
DATA vexp_one<>+24(SB)/8, $0x3ff0000000000000
DATA vexp_one<>+32(SB)/8, $0x3ff0000000000000
DATA vexp_one<>+40(SB)/8, $0x3ff0000000000000
DATA vexp_one<>+48(SB)/8, $0x3ff0000000000000
DATA vexp_one<>+56(SB)/8, $0x3ff0000000000000
GLOBL vexp_one<>(SB), RODATA|NOPTR, $64
DATA vexp_two<>+0(SB)/8, $0x4000000000000000
DATA vexp_two<>+8(SB)/8, $0x4000000000000000
DATA vexp_two<>+16(SB)/8, $0x4000000000000000
DATA vexp_two<>+24(SB)/8, $0x4000000000000000
DATA vexp_two<>+32(SB)/8, $0x4000000000000000
DATA vexp_two<>+40(SB)/8, $0x4000000000000000
DATA vexp_two<>+48(SB)/8, $0x4000000000000000
DATA vexp_two<>+56(SB)/8, $0x4000000000000000
GLOBL vexp_two<>(SB), RODATA|NOPTR, $64
DATA vexp_sign<>+0(SB)/8, $0x8000000000000000
DATA vexp_sign<>+8(SB)/8, $0x8000000000000000
DATA vexp_sign<>+16(SB)/8, $0x8000000000000000
DATA vexp_sign<>+24(SB)/8, $0x8000000000000000
DATA vexp_sign<>+32(SB)/8, $0x8000000000000000
DATA vexp_sign<>+40(SB)/8, $0x8000000000000000
DATA vexp_sign<>+48(SB)/8, $0x8000000000000000
DATA vexp_sign<>+56(SB)/8, $0x8000000000000000
GLOBL vexp_sign<>(SB), RODATA|NOPTR, $64
DATA vexp_c0<>+0(SB)/8, $0x3ff0000000000000
DATA vexp_c0<>+8(SB)/8, $0x3ff0000000000000
DATA vexp_c0<>+16(SB)/8, $0x3ff0000000000000
DATA vexp_c0<>+24(SB)/8, $0x3ff0000000000000
DATA vexp_c0<>+32(SB)/8, $0x3ff0000000000000
DATA vexp_c0<>+40(SB)/8, $0x3ff0000000000000
DATA vexp_c0<>+48(SB)/8, $0x3ff0000000000000
DATA vexp_c0<>+56(SB)/8, $0x3ff0000000000000
GLOBL vexp_c0<>(SB), RODATA|NOPTR, $64
DATA vexp_c1<>+0(SB)/8, $0x3ff0000000000000
DATA vexp_c1<>+8(SB)/8, $0x3ff0000000000000
DATA vexp_c1<>+16(SB)/8, $0x3ff0000000000000
DATA vexp_c1<>+24(SB)/8, $0x3ff0000000000000
DATA vexp_c1<>+32(SB)/8, $0x3ff0000000000000
DATA vexp_c1<>+40(SB)/8, $0x3ff0000000000000
DATA vexp_c1<>+48(SB)/8, $0x3ff0000000000000
DATA vexp_c1<>+56(SB)/8, $0x3ff0000000000000
GLOBL vexp_c1<>(SB), RODATA|NOPTR, $64
DATA vexp_c2<>+0(SB)/8, $0x3fe0000000000000
DATA vexp_c2<>+8(SB)/8, $0x3fe0000000000000
DATA vexp_c2<>+16(SB)/8, $0x3fe0000000000000
DATA vexp_c2<>+24(SB)/8, $0x3fe0000000000000
DATA vexp_c2<>+32(SB)/8, $0x3fe0000000000000
DATA vexp_c2<>+40(SB)/8, $0x3fe0000000000000
DATA vexp_c2<>+48(SB)/8, $0x3fe0000000000000
DATA vexp_c2<>+56(SB)/8, $0x3fe0000000000000
GLOBL vexp_c2<>(SB), RODATA|NOPTR, $64
DATA vexp_c3<>+0(SB)/8, $0x3fc5555555555555
DATA vexp_c3<>+8(SB)/8, $0x3fc5555555555555
DATA vexp_c3<>+16(SB)/8, $0x3fc5555555555555
DATA vexp_c3<>+24(SB)/8, $0x3fc5555555555555
DATA vexp_c3<>+32(SB)/8, $0x3fc5555555555555
DATA vexp_c3<>+40(SB)/8, $0x3fc5555555555555
DATA vexp_c3<>+48(SB)/8, $0x3fc5555555555555
DATA vexp_c3<>+56(SB)/8, $0x3fc5555555555555
GLOBL vexp_c3<>(SB), RODATA|NOPTR, $64
DATA vexp_c4<>+0(SB)/8, $0x3fa5555555555555
DATA vexp_c4<>+8(SB)/8, $0x3fa5555555555555
DATA vexp_c4<>+16(SB)/8, $0x3fa5555555555555
DATA vexp_c4<>+24(SB)/8, $0x3fa5555555555555
DATA vexp_c4<>+32(SB)/8, $0x3fa5555555555555
DATA vexp_c4<>+40(SB)/8, $0x3fa5555555555555
DATA vexp_c4<>+48(SB)/8, $0x3fa5555555555555
DATA vexp_c4<>+56(SB)/8, $0x3fa5555555555555
GLOBL vexp_c4<>(SB), RODATA|NOPTR, $64
DATA vexp_c5<>+0(SB)/8, $0x3f81111111111111
DATA vexp_c5<>+8(SB)/8, $0x3f81111111111111
DATA vexp_c5<>+16(SB)/8, $0x3f81111111111111
DATA vexp_c5<>+24(SB)/8, $0x3f81111111111111
DATA vexp_c5<>+32(SB)/8, $0x3f81111111111111
DATA vexp_c5<>+40(SB)/8, $0x3f81111111111111
DATA vexp_c5<>+48(SB)/8, $0x3f81111111111111
DATA vexp_c5<>+56(SB)/8, $0x3f81111111111111
GLOBL vexp_c5<>(SB), RODATA|NOPTR, $64
DATA vexp_c6<>+0(SB)/8, $0x3f56c16c16c16c17
DATA vexp_c6<>+8(SB)/8, $0x3f56c16c16c16c17
DATA vexp_c6<>+16(SB)/8, $0x3f56c16c16c16c17
DATA vexp_c6<>+24(SB)/8, $0x3f56c16c16c16c17
DATA vexp_c6<>+32(SB)/8, $0x3f56c16c16c16c17
DATA vexp_c6<>+40(SB)/8, $0x3f56c16c16c16c17
DATA vexp_c6<>+48(SB)/8, $0x3f56c16c16c16c17
DATA vexp_c6<>+56(SB)/8, $0x3f56c16c16c16c17
GLOBL vexp_c6<>(SB), RODATA|NOPTR, $64
DATA vexp_c7<>+0(SB)/8, $0x3f2a01a01a01a01a
DATA vexp_c7<>+8(SB)/8, $0x3f2a01a01a01a01a
DATA vexp_c7<>+16(SB)/8, $0x3f2a01a01a01a01a
DATA vexp_c7<>+24(SB)/8, $0x3f2a01a01a01a01a
DATA vexp_c7<>+32(SB)/8, $0x3f2a01a01a01a01a
DATA vexp_c7<>+40(SB)/8, $0x3f2a01a01a01a01a
DATA vexp_c7<>+48(SB)/8, $0x3f2a01a01a01a01a
DATA vexp_c7<>+56(SB)/8, $0x3f2a01a01a01a01a
GLOBL vexp_c7<>(SB), RODATA|NOPTR, $64
DATA vexp_c8<>+0(SB)/8, $0x3efa01a01a01a01a
DATA vexp_c8<>+8(SB)/8, $0x3efa01a01a01a01a
DATA vexp_c8<>+16(SB)/8, $0x3efa01a01a01a01a
DATA vexp_c8<>+24(SB)/8, $0x3efa01a01a01a01a
DATA vexp_c8<>+32(SB)/8, $0x3efa01a01a01a01a
DATA vexp_c8<>+40(SB)/8, $0x3efa01a01a01a01a
DATA vexp_c8<>+48(SB)/8, $0x3efa01a01a01a01a
DATA vexp_c8<>+56(SB)/8, $0x3efa01a01a01a01a
GLOBL vexp_c8<>(SB), RODATA|NOPTR, $64
DATA vexp_c9<>+0(SB)/8, $0x3ec71de3a556c734
DATA vexp_c9<>+8(SB)/8, $0x3ec71de3a556c734
DATA vexp_c9<>+16(SB)/8, $0x3ec71de3a556c734
DATA vexp_c9<>+24(SB)/8, $0x3ec71de3a556c734
DATA vexp_c9<>+32(SB)/8, $0x3ec71de3a556c734
DATA vexp_c9<>+40(SB)/8, $0x3ec71de3a556c734
DATA vexp_c9<>+48(SB)/8, $0x3ec71de3a556c734
DATA vexp_c9<>+56(SB)/8, $0x3ec71de3a556c734
GLOBL vexp_c9<>(SB), RODATA|NOPTR, $64
DATA vexp_c10<>+0(SB)/8, $0x3e927e4fb7789f5c
DATA vexp_c10<>+8(SB)/8, $0x3e927e4fb7789f5c
DATA vexp_c10<>+16(SB)/8, $0x3e927e4fb7789f5c
DATA vexp_c10<>+24(SB)/8, $0x3e927e4fb7789f5c
DATA vexp_c10<>+32(SB)/8, $0x3e927e4fb7789f5c
DATA vexp_c10<>+40(SB)/8, $0x3e927e4fb7789f5c
DATA vexp_c10<>+48(SB)/8, $0x3e927e4fb7789f5c
DATA vexp_c10<>+56(SB)/8, $0x3e927e4fb7789f5c
GLOBL vexp_c10<>(SB), RODATA|NOPTR, $64
DATA vexp_c11<>+0(SB)/8, $0x3e5ae64567f544e4
DATA vexp_c11<>+8(SB)/8, $0x3e5ae64567f544e4
DATA vexp_c11<>+16(SB)/8, $0x3e5ae64567f544e4
DATA vexp_c11<>+24(SB)/8, $0x3e5ae64567f544e4
DATA vexp_c11<>+32(SB)/8, $0x3e5ae64567f544e4
DATA vexp_c11<>+40(SB)/8, $0x3e5ae64567f544e4
DATA vexp_c11<>+48(SB)/8, $0x3e5ae64567f544e4
DATA vexp_c11<>+56(SB)/8, $0x3e5ae64567f544e4
GLOBL vexp_c11<>(SB), RODATA|NOPTR, $64
DATA vexp_c12<>+0(SB)/8, $0x3e21eed8eff8d898
DATA vexp_c12<>+8(SB)/8, $0x3e21eed8eff8d898
DATA vexp_c12<>+16(SB)/8, $0x3e21eed8eff8d898
DATA vexp_c12<>+24(SB)/8, $0x3e21eed8eff8d898
DATA vexp_c12<>+32(SB)/8, $0x3e21eed8eff8d898
DATA vexp_c12<>+40(SB)/8, $0x3e21eed8eff8d898
DATA vexp_c12<>+48(SB)/8, $0x3e21eed8eff8d898
DATA vexp_c12<>+56(SB)/8, $0x3e21eed8eff8d898
GLOBL vexp_c12<>(SB), RODATA|NOPTR, $64

// The macros below work on two sets of registers at once (U1, T1, N1,
// P1 and U2, T2, N2, P2: 16 float64 lanes in Z registers, 8 in Y), their
// instructions interleaved so that the two dependency chains overlap; LO
// and HI hold −110 and 110.

// VEXP_RANGE: clamps U (NaN stays), leaves r in U, n in N and n<<52 in T.
#define VEXP_RANGE(U1, T1, N1, P1, U2, T2, N2, P2, LO, HI) \
	VMAXPD U1, LO, U1 \
	VMAXPD U2, LO, U2 \
	VMINPD U1, HI, U1 \
	VMINPD U2, HI, U2 \
	VMOVUPD vexp_shift<>(SB), T1 \
	VMOVUPD vexp_shift<>(SB), T2 \
	VFMADD231PD vexp_log2e<>(SB), U1, T1 \
	VFMADD231PD vexp_log2e<>(SB), U2, T2 \
	VSUBPD vexp_shift<>(SB), T1, N1 \
	VSUBPD vexp_shift<>(SB), T2, N2 \
	VFNMADD231PD vexp_ln2hi<>(SB), N1, U1 \
	VFNMADD231PD vexp_ln2hi<>(SB), N2, U2 \
	VFNMADD231PD vexp_ln2lo<>(SB), N1, U1 \
	VFNMADD231PD vexp_ln2lo<>(SB), N2, U2 \
	VPSLLQ $52, T1, T1 \
	VPSLLQ $52, T2, T2

// VEXP_POLY1: P = q(r) = Σ_{k=1..12} r^(k−1)/k!, so that e^r ≈ 1 + r·q(r),
// r in U.
#define VEXP_POLY1(U1, P1, U2, P2) \
	VMOVUPD vexp_c12<>(SB), P1 \
	VMOVUPD vexp_c12<>(SB), P2 \
	VFMADD213PD vexp_c11<>(SB), U1, P1 \
	VFMADD213PD vexp_c11<>(SB), U2, P2 \
	VFMADD213PD vexp_c10<>(SB), U1, P1 \
	VFMADD213PD vexp_c10<>(SB), U2, P2 \
	VFMADD213PD vexp_c9<>(SB), U1, P1 \
	VFMADD213PD vexp_c9<>(SB), U2, P2 \
	VFMADD213PD vexp_c8<>(SB), U1, P1 \
	VFMADD213PD vexp_c8<>(SB), U2, P2 \
	VFMADD213PD vexp_c7<>(SB), U1, P1 \
	VFMADD213PD vexp_c7<>(SB), U2, P2 \
	VFMADD213PD vexp_c6<>(SB), U1, P1 \
	VFMADD213PD vexp_c6<>(SB), U2, P2 \
	VFMADD213PD vexp_c5<>(SB), U1, P1 \
	VFMADD213PD vexp_c5<>(SB), U2, P2 \
	VFMADD213PD vexp_c4<>(SB), U1, P1 \
	VFMADD213PD vexp_c4<>(SB), U2, P2 \
	VFMADD213PD vexp_c3<>(SB), U1, P1 \
	VFMADD213PD vexp_c3<>(SB), U2, P2 \
	VFMADD213PD vexp_c2<>(SB), U1, P1 \
	VFMADD213PD vexp_c2<>(SB), U2, P2 \
	VFMADD213PD vexp_c1<>(SB), U1, P1 \
	VFMADD213PD vexp_c1<>(SB), U2, P2

// VEXPPD: P = e^U (U, T, N clobbered).
#define VEXPPD(U1, T1, N1, P1, U2, T2, N2, P2, LO, HI) \
	VEXP_RANGE(U1, T1, N1, P1, U2, T2, N2, P2, LO, HI) \
	VEXP_POLY1(U1, P1, U2, P2) \
	VFMADD213PD vexp_c0<>(SB), U1, P1 \
	VFMADD213PD vexp_c0<>(SB), U2, P2 \
	VPADDQ T1, P1, P1 \
	VPADDQ T2, P2, P2

// VEXPM1PD: P = e^U − 1 without cancellation near 0, as
// 2ⁿ·(r·q(r)) + (2ⁿ − 1) (U, T, N clobbered).
#define VEXPM1PD(U1, T1, N1, P1, U2, T2, N2, P2, LO, HI) \
	VEXP_RANGE(U1, T1, N1, P1, U2, T2, N2, P2, LO, HI) \
	VEXP_POLY1(U1, P1, U2, P2) \
	VMULPD U1, P1, P1 \
	VMULPD U2, P2, P2 \
	VPADDQ vexp_one<>(SB), T1, T1 \
	VPADDQ vexp_one<>(SB), T2, T2 \
	VSUBPD vexp_one<>(SB), T1, N1 \
	VSUBPD vexp_one<>(SB), T2, N2 \
	VFMADD213PD N1, T1, P1 \
	VFMADD213PD N2, T2, P2

// VTANHPD: P = tanh(X) = e/(e + 2), e = e^(2X) − 1, with X's sign (so
// tanh(−0) = −0); X is kept.
#define VTANHPD(X1, X2, U1, T1, N1, P1, U2, T2, N2, P2, LO, HI) \
	VADDPD X1, X1, U1 \
	VADDPD X2, X2, U2 \
	VEXPM1PD(U1, T1, N1, P1, U2, T2, N2, P2, LO, HI) \
	VADDPD vexp_two<>(SB), P1, N1 \
	VADDPD vexp_two<>(SB), P2, N2 \
	VDIVPD N1, P1, P1 \
	VDIVPD N2, P2, P2 \
	VANDPD vexp_sign<>(SB), X1, N1 \
	VANDPD vexp_sign<>(SB), X2, N2 \
	VORPD N1, P1, P1 \
	VORPD N2, P2, P2

// VSIGMOIDPD: P = 1/(1 + e^−U) (U, T, N clobbered).
#define VSIGMOIDPD(U1, T1, N1, P1, U2, T2, N2, P2, LO, HI) \
	VXORPD vexp_sign<>(SB), U1, U1 \
	VXORPD vexp_sign<>(SB), U2, U2 \
	VEXPPD(U1, T1, N1, P1, U2, T2, N2, P2, LO, HI) \
	VADDPD vexp_one<>(SB), P1, P1 \
	VADDPD vexp_one<>(SB), P2, P2 \
	VMOVUPD vexp_one<>(SB), N1 \
	VMOVUPD vexp_one<>(SB), N2 \
	VDIVPD P1, N1, P1 \
	VDIVPD P2, N2, P2

// Exp in float32, 16 (8) lanes at a time: x is clamped to [−104, 89]
// (NaN passes), n = round(x·log₂e), r = x − n·ln 2 in two FMAs (ln 2 split
// so that n·hi is exact), e^r by its Taylor polynomial of degree 7
// (remainder below 2⁻²⁷ of the result) in FMAs, and the product with 2ⁿ
// rounded once: VSCALEFPS in the AVX-512 kernel, two exact powers of two
// (2^⌊n/2⌋ exactly, then 2^(n−⌊n/2⌋) with the one rounding) in the AVX2
// one, so both give the same bits, +Inf above the float32 range and the
// correctly rounded subnormals and 0 below it. Over all 2³² float32
// inputs the result is within 1 ulp of float32(math.Exp(float64(x)))
// (TestUnaryKernelsULP with -unary.exhaustive).
DATA vexpf_min<>+0(SB)/4, $0xc2d00000
GLOBL vexpf_min<>(SB), RODATA|NOPTR, $4
DATA vexpf_max<>+0(SB)/4, $0x42b20000
GLOBL vexpf_max<>(SB), RODATA|NOPTR, $4
DATA vexpf_log2e<>+0(SB)/4, $0x3fb8aa3b
GLOBL vexpf_log2e<>(SB), RODATA|NOPTR, $4
DATA vexpf_ln2hi<>+0(SB)/4, $0x3f317200
GLOBL vexpf_ln2hi<>(SB), RODATA|NOPTR, $4
DATA vexpf_ln2lo<>+0(SB)/4, $0x35bfbe8e
GLOBL vexpf_ln2lo<>(SB), RODATA|NOPTR, $4
DATA vexpf_c0<>+0(SB)/4, $0x3f800000
GLOBL vexpf_c0<>(SB), RODATA|NOPTR, $4
DATA vexpf_c1<>+0(SB)/4, $0x3f800000
GLOBL vexpf_c1<>(SB), RODATA|NOPTR, $4
DATA vexpf_c2<>+0(SB)/4, $0x3f000000
GLOBL vexpf_c2<>(SB), RODATA|NOPTR, $4
DATA vexpf_c3<>+0(SB)/4, $0x3e2aaaab
GLOBL vexpf_c3<>(SB), RODATA|NOPTR, $4
DATA vexpf_c4<>+0(SB)/4, $0x3d2aaaab
GLOBL vexpf_c4<>(SB), RODATA|NOPTR, $4
DATA vexpf_c5<>+0(SB)/4, $0x3c088889
GLOBL vexpf_c5<>(SB), RODATA|NOPTR, $4
DATA vexpf_c6<>+0(SB)/4, $0x3ab60b61
GLOBL vexpf_c6<>(SB), RODATA|NOPTR, $4
DATA vexpf_c7<>+0(SB)/4, $0x39500d01
GLOBL vexpf_c7<>(SB), RODATA|NOPTR, $4
DATA vexpf_bias<>+0(SB)/4, $0x0000007f
GLOBL vexpf_bias<>(SB), RODATA|NOPTR, $4

// VEXPF_POLY(R, P): P = Σ_{k=0..7} r^k/k!, r in R (AVX-512, broadcast
// constants).
#define VEXPF_POLY16(R, P) \
	VBROADCASTSS vexpf_c7<>(SB), P \
	VFMADD213PS.BCST vexpf_c6<>(SB), R, P \
	VFMADD213PS.BCST vexpf_c5<>(SB), R, P \
	VFMADD213PS.BCST vexpf_c4<>(SB), R, P \
	VFMADD213PS.BCST vexpf_c3<>(SB), R, P \
	VFMADD213PS.BCST vexpf_c2<>(SB), R, P \
	VFMADD213PS.BCST vexpf_c1<>(SB), R, P \
	VFMADD213PS.BCST vexpf_c0<>(SB), R, P

// func expAVX512(dst, x *float32, n int)
// dst[i] = e^x[i] for n (a multiple of 16) elements.
TEXT ·expAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS vexpf_min<>(SB), Z30
	VBROADCASTSS vexpf_max<>(SB), Z31
	SHRQ $4, CX
	JZ   vexpf16done
vexpf16loop:
	VMOVUPS (SI), Z0
	VMAXPS Z0, Z30, Z0
	VMINPS Z0, Z31, Z0
	VMULPS.BCST vexpf_log2e<>(SB), Z0, Z1
	VRNDSCALEPS $0, Z1, Z1
	VFNMADD231PS.BCST vexpf_ln2hi<>(SB), Z1, Z0
	VFNMADD231PS.BCST vexpf_ln2lo<>(SB), Z1, Z0
	VEXPF_POLY16(Z0, Z2)
	VSCALEFPS Z1, Z2, Z2
	VMOVUPS Z2, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  vexpf16loop
vexpf16done:
	VZEROUPPER
	RET

// func expAVX2(dst, x *float32, n int)
// dst[i] = e^x[i] for n (a multiple of 8) elements, as expAVX512.
TEXT ·expAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS vexpf_min<>(SB), Y14
	VBROADCASTSS vexpf_max<>(SB), Y15
	VBROADCASTSS vexpf_log2e<>(SB), Y13
	VBROADCASTSS vexpf_ln2hi<>(SB), Y12
	VBROADCASTSS vexpf_ln2lo<>(SB), Y11
	VPBROADCASTD vexpf_bias<>(SB), Y10
	SHRQ $3, CX
	JZ   vexpf8done
vexpf8loop:
	VMOVUPS (SI), Y0
	VMAXPS Y0, Y14, Y0
	VMINPS Y0, Y15, Y0
	VMULPS Y13, Y0, Y1
	VROUNDPS $0, Y1, Y1
	VFNMADD231PS Y12, Y1, Y0
	VFNMADD231PS Y11, Y1, Y0
	VBROADCASTSS vexpf_c7<>(SB), Y2
	VBROADCASTSS vexpf_c6<>(SB), Y4
	VFMADD213PS Y4, Y0, Y2
	VBROADCASTSS vexpf_c5<>(SB), Y4
	VFMADD213PS Y4, Y0, Y2
	VBROADCASTSS vexpf_c4<>(SB), Y4
	VFMADD213PS Y4, Y0, Y2
	VBROADCASTSS vexpf_c3<>(SB), Y4
	VFMADD213PS Y4, Y0, Y2
	VBROADCASTSS vexpf_c2<>(SB), Y4
	VFMADD213PS Y4, Y0, Y2
	VBROADCASTSS vexpf_c1<>(SB), Y4
	VFMADD213PS Y4, Y0, Y2
	VBROADCASTSS vexpf_c0<>(SB), Y4
	VFMADD213PS Y4, Y0, Y2
	VCVTPS2DQ Y1, Y3
	VPSRAD $1, Y3, Y4
	VPSUBD Y4, Y3, Y3
	VPADDD Y10, Y4, Y4
	VPADDD Y10, Y3, Y3
	VPSLLD $23, Y4, Y4
	VPSLLD $23, Y3, Y3
	VMULPS Y4, Y2, Y2
	VMULPS Y3, Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  vexpf8loop
vexpf8done:
	VZEROUPPER
	RET

// func tanhAVX512(dst, x *float32, n int)
// dst[i] = tanh(x[i]) for n (a multiple of 16) elements.
TEXT ·tanhAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPD vexp_min<>(SB), Z30
	VMOVUPD vexp_max<>(SB), Z31
	SHRQ $4, CX
	JZ   vtanh16done
vtanh16loop:
	VCVTPS2PD (SI), Z0
	VCVTPS2PD 32(SI), Z1
	VTANHPD(Z0, Z1, Z8, Z2, Z4, Z6, Z9, Z3, Z5, Z7, Z30, Z31)
	VCVTPD2PS Z6, Y6
	VCVTPD2PS Z7, Y7
	VMOVUPS Y6, (DI)
	VMOVUPS Y7, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  vtanh16loop
vtanh16done:
	VZEROUPPER
	RET

// func tanhAVX2(dst, x *float32, n int)
// dst[i] = tanh(x[i]) for n (a multiple of 8) elements, as tanhAVX512.
TEXT ·tanhAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPD vexp_min<>(SB), Y14
	VMOVUPD vexp_max<>(SB), Y15
	SHRQ $3, CX
	JZ   vtanh8done
vtanh8loop:
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VTANHPD(Y0, Y1, Y8, Y2, Y4, Y6, Y9, Y3, Y5, Y7, Y14, Y15)
	VCVTPD2PSY Y6, X6
	VCVTPD2PSY Y7, X7
	VMOVUPS X6, (DI)
	VMOVUPS X7, 16(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  vtanh8loop
vtanh8done:
	VZEROUPPER
	RET

// func sigmoidAVX512(dst, x *float32, n int)
// dst[i] = 1/(1 + e^−x[i]) for n (a multiple of 16) elements.
TEXT ·sigmoidAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPD vexp_min<>(SB), Z30
	VMOVUPD vexp_max<>(SB), Z31
	SHRQ $4, CX
	JZ   vsig16done
vsig16loop:
	VCVTPS2PD (SI), Z0
	VCVTPS2PD 32(SI), Z1
	VSIGMOIDPD(Z0, Z2, Z4, Z6, Z1, Z3, Z5, Z7, Z30, Z31)
	VCVTPD2PS Z6, Y6
	VCVTPD2PS Z7, Y7
	VMOVUPS Y6, (DI)
	VMOVUPS Y7, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  vsig16loop
vsig16done:
	VZEROUPPER
	RET

// func sigmoidAVX2(dst, x *float32, n int)
// dst[i] = 1/(1 + e^−x[i]) for n (a multiple of 8) elements, as
// sigmoidAVX512.
TEXT ·sigmoidAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPD vexp_min<>(SB), Y14
	VMOVUPD vexp_max<>(SB), Y15
	SHRQ $3, CX
	JZ   vsig8done
vsig8loop:
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VSIGMOIDPD(Y0, Y2, Y4, Y6, Y1, Y3, Y5, Y7, Y14, Y15)
	VCVTPD2PSY Y6, X6
	VCVTPD2PSY Y7, X7
	VMOVUPS X6, (DI)
	VMOVUPS X7, 16(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  vsig8loop
vsig8done:
	VZEROUPPER
	RET
