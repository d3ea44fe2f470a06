// The GELU kernels of cpu_fast_amd64.s as they were before lanes whose
// e^(−x²/2) underflows (|x| > 13.2) stopped evaluating the exponential at
// the clamp, and lanes with x ≥ 8 stopped evaluating the erfc tail: both
// produced subnormal intermediates, which cost a microcode assist per
// instruction on Intel CPUs, before being masked to 0 or rounded away.
// Only gelu_prev_amd64_test.go calls them, to check that the current
// kernels give their bits for every input; the linker drops them from
// other binaries.

//go:build amd64 && !purego

#include "textflag.h"

DATA gelu_one<>+0(SB)/4, $0x3f800000
DATA gelu_one<>+4(SB)/4, $0x3f800000
DATA gelu_one<>+8(SB)/4, $0x3f800000
DATA gelu_one<>+12(SB)/4, $0x3f800000
DATA gelu_one<>+16(SB)/4, $0x3f800000
DATA gelu_one<>+20(SB)/4, $0x3f800000
DATA gelu_one<>+24(SB)/4, $0x3f800000
DATA gelu_one<>+28(SB)/4, $0x3f800000
GLOBL gelu_one<>(SB), RODATA|NOPTR, $32
DATA gelu_half<>+0(SB)/4, $0x3f000000
DATA gelu_half<>+4(SB)/4, $0x3f000000
DATA gelu_half<>+8(SB)/4, $0x3f000000
DATA gelu_half<>+12(SB)/4, $0x3f000000
DATA gelu_half<>+16(SB)/4, $0x3f000000
DATA gelu_half<>+20(SB)/4, $0x3f000000
DATA gelu_half<>+24(SB)/4, $0x3f000000
DATA gelu_half<>+28(SB)/4, $0x3f000000
GLOBL gelu_half<>(SB), RODATA|NOPTR, $32
DATA gelu_neghalf<>+0(SB)/4, $0xbf000000
DATA gelu_neghalf<>+4(SB)/4, $0xbf000000
DATA gelu_neghalf<>+8(SB)/4, $0xbf000000
DATA gelu_neghalf<>+12(SB)/4, $0xbf000000
DATA gelu_neghalf<>+16(SB)/4, $0xbf000000
DATA gelu_neghalf<>+20(SB)/4, $0xbf000000
DATA gelu_neghalf<>+24(SB)/4, $0xbf000000
DATA gelu_neghalf<>+28(SB)/4, $0xbf000000
GLOBL gelu_neghalf<>(SB), RODATA|NOPTR, $32
DATA gelu_minarg<>+0(SB)/4, $0xc2aeac50
DATA gelu_minarg<>+4(SB)/4, $0xc2aeac50
DATA gelu_minarg<>+8(SB)/4, $0xc2aeac50
DATA gelu_minarg<>+12(SB)/4, $0xc2aeac50
DATA gelu_minarg<>+16(SB)/4, $0xc2aeac50
DATA gelu_minarg<>+20(SB)/4, $0xc2aeac50
DATA gelu_minarg<>+24(SB)/4, $0xc2aeac50
DATA gelu_minarg<>+28(SB)/4, $0xc2aeac50
GLOBL gelu_minarg<>(SB), RODATA|NOPTR, $32
DATA gelu_log2e<>+0(SB)/4, $0x3fb8aa3b
DATA gelu_log2e<>+4(SB)/4, $0x3fb8aa3b
DATA gelu_log2e<>+8(SB)/4, $0x3fb8aa3b
DATA gelu_log2e<>+12(SB)/4, $0x3fb8aa3b
DATA gelu_log2e<>+16(SB)/4, $0x3fb8aa3b
DATA gelu_log2e<>+20(SB)/4, $0x3fb8aa3b
DATA gelu_log2e<>+24(SB)/4, $0x3fb8aa3b
DATA gelu_log2e<>+28(SB)/4, $0x3fb8aa3b
GLOBL gelu_log2e<>(SB), RODATA|NOPTR, $32
DATA gelu_c1<>+0(SB)/4, $0x3f318000
DATA gelu_c1<>+4(SB)/4, $0x3f318000
DATA gelu_c1<>+8(SB)/4, $0x3f318000
DATA gelu_c1<>+12(SB)/4, $0x3f318000
DATA gelu_c1<>+16(SB)/4, $0x3f318000
DATA gelu_c1<>+20(SB)/4, $0x3f318000
DATA gelu_c1<>+24(SB)/4, $0x3f318000
DATA gelu_c1<>+28(SB)/4, $0x3f318000
GLOBL gelu_c1<>(SB), RODATA|NOPTR, $32
DATA gelu_c2<>+0(SB)/4, $0xb95e8083
DATA gelu_c2<>+4(SB)/4, $0xb95e8083
DATA gelu_c2<>+8(SB)/4, $0xb95e8083
DATA gelu_c2<>+12(SB)/4, $0xb95e8083
DATA gelu_c2<>+16(SB)/4, $0xb95e8083
DATA gelu_c2<>+20(SB)/4, $0xb95e8083
DATA gelu_c2<>+24(SB)/4, $0xb95e8083
DATA gelu_c2<>+28(SB)/4, $0xb95e8083
GLOBL gelu_c2<>(SB), RODATA|NOPTR, $32
DATA gelu_p0<>+0(SB)/4, $0x39506967
DATA gelu_p0<>+4(SB)/4, $0x39506967
DATA gelu_p0<>+8(SB)/4, $0x39506967
DATA gelu_p0<>+12(SB)/4, $0x39506967
DATA gelu_p0<>+16(SB)/4, $0x39506967
DATA gelu_p0<>+20(SB)/4, $0x39506967
DATA gelu_p0<>+24(SB)/4, $0x39506967
DATA gelu_p0<>+28(SB)/4, $0x39506967
GLOBL gelu_p0<>(SB), RODATA|NOPTR, $32
DATA gelu_p1<>+0(SB)/4, $0x3ab743ce
DATA gelu_p1<>+4(SB)/4, $0x3ab743ce
DATA gelu_p1<>+8(SB)/4, $0x3ab743ce
DATA gelu_p1<>+12(SB)/4, $0x3ab743ce
DATA gelu_p1<>+16(SB)/4, $0x3ab743ce
DATA gelu_p1<>+20(SB)/4, $0x3ab743ce
DATA gelu_p1<>+24(SB)/4, $0x3ab743ce
DATA gelu_p1<>+28(SB)/4, $0x3ab743ce
GLOBL gelu_p1<>(SB), RODATA|NOPTR, $32
DATA gelu_p2<>+0(SB)/4, $0x3c088908
DATA gelu_p2<>+4(SB)/4, $0x3c088908
DATA gelu_p2<>+8(SB)/4, $0x3c088908
DATA gelu_p2<>+12(SB)/4, $0x3c088908
DATA gelu_p2<>+16(SB)/4, $0x3c088908
DATA gelu_p2<>+20(SB)/4, $0x3c088908
DATA gelu_p2<>+24(SB)/4, $0x3c088908
DATA gelu_p2<>+28(SB)/4, $0x3c088908
GLOBL gelu_p2<>(SB), RODATA|NOPTR, $32
DATA gelu_p3<>+0(SB)/4, $0x3d2aa9c1
DATA gelu_p3<>+4(SB)/4, $0x3d2aa9c1
DATA gelu_p3<>+8(SB)/4, $0x3d2aa9c1
DATA gelu_p3<>+12(SB)/4, $0x3d2aa9c1
DATA gelu_p3<>+16(SB)/4, $0x3d2aa9c1
DATA gelu_p3<>+20(SB)/4, $0x3d2aa9c1
DATA gelu_p3<>+24(SB)/4, $0x3d2aa9c1
DATA gelu_p3<>+28(SB)/4, $0x3d2aa9c1
GLOBL gelu_p3<>(SB), RODATA|NOPTR, $32
DATA gelu_p4<>+0(SB)/4, $0x3e2aaaaa
DATA gelu_p4<>+4(SB)/4, $0x3e2aaaaa
DATA gelu_p4<>+8(SB)/4, $0x3e2aaaaa
DATA gelu_p4<>+12(SB)/4, $0x3e2aaaaa
DATA gelu_p4<>+16(SB)/4, $0x3e2aaaaa
DATA gelu_p4<>+20(SB)/4, $0x3e2aaaaa
DATA gelu_p4<>+24(SB)/4, $0x3e2aaaaa
DATA gelu_p4<>+28(SB)/4, $0x3e2aaaaa
GLOBL gelu_p4<>(SB), RODATA|NOPTR, $32
DATA gelu_p5<>+0(SB)/4, $0x3f000000
DATA gelu_p5<>+4(SB)/4, $0x3f000000
DATA gelu_p5<>+8(SB)/4, $0x3f000000
DATA gelu_p5<>+12(SB)/4, $0x3f000000
DATA gelu_p5<>+16(SB)/4, $0x3f000000
DATA gelu_p5<>+20(SB)/4, $0x3f000000
DATA gelu_p5<>+24(SB)/4, $0x3f000000
DATA gelu_p5<>+28(SB)/4, $0x3f000000
GLOBL gelu_p5<>(SB), RODATA|NOPTR, $32
DATA gelu_invsqrt2<>+0(SB)/4, $0x3f3504f3
DATA gelu_invsqrt2<>+4(SB)/4, $0x3f3504f3
DATA gelu_invsqrt2<>+8(SB)/4, $0x3f3504f3
DATA gelu_invsqrt2<>+12(SB)/4, $0x3f3504f3
DATA gelu_invsqrt2<>+16(SB)/4, $0x3f3504f3
DATA gelu_invsqrt2<>+20(SB)/4, $0x3f3504f3
DATA gelu_invsqrt2<>+24(SB)/4, $0x3f3504f3
DATA gelu_invsqrt2<>+28(SB)/4, $0x3f3504f3
GLOBL gelu_invsqrt2<>(SB), RODATA|NOPTR, $32
DATA gelu_invsqrt2pi<>+0(SB)/4, $0x3ecc422a
DATA gelu_invsqrt2pi<>+4(SB)/4, $0x3ecc422a
DATA gelu_invsqrt2pi<>+8(SB)/4, $0x3ecc422a
DATA gelu_invsqrt2pi<>+12(SB)/4, $0x3ecc422a
DATA gelu_invsqrt2pi<>+16(SB)/4, $0x3ecc422a
DATA gelu_invsqrt2pi<>+20(SB)/4, $0x3ecc422a
DATA gelu_invsqrt2pi<>+24(SB)/4, $0x3ecc422a
DATA gelu_invsqrt2pi<>+28(SB)/4, $0x3ecc422a
GLOBL gelu_invsqrt2pi<>(SB), RODATA|NOPTR, $32
DATA gelu_a0<>+0(SB)/4, $0x3f906eba
DATA gelu_a0<>+4(SB)/4, $0x3f906eba
DATA gelu_a0<>+8(SB)/4, $0x3f906eba
DATA gelu_a0<>+12(SB)/4, $0x3f906eba
DATA gelu_a0<>+16(SB)/4, $0x3f906eba
DATA gelu_a0<>+20(SB)/4, $0x3f906eba
DATA gelu_a0<>+24(SB)/4, $0x3f906eba
DATA gelu_a0<>+28(SB)/4, $0x3f906eba
GLOBL gelu_a0<>(SB), RODATA|NOPTR, $32
DATA gelu_a1<>+0(SB)/4, $0xbec09358
DATA gelu_a1<>+4(SB)/4, $0xbec09358
DATA gelu_a1<>+8(SB)/4, $0xbec09358
DATA gelu_a1<>+12(SB)/4, $0xbec09358
DATA gelu_a1<>+16(SB)/4, $0xbec09358
DATA gelu_a1<>+20(SB)/4, $0xbec09358
DATA gelu_a1<>+24(SB)/4, $0xbec09358
DATA gelu_a1<>+28(SB)/4, $0xbec09358
GLOBL gelu_a1<>(SB), RODATA|NOPTR, $32
DATA gelu_a2<>+0(SB)/4, $0x3de707d0
DATA gelu_a2<>+4(SB)/4, $0x3de707d0
DATA gelu_a2<>+8(SB)/4, $0x3de707d0
DATA gelu_a2<>+12(SB)/4, $0x3de707d0
DATA gelu_a2<>+16(SB)/4, $0x3de707d0
DATA gelu_a2<>+20(SB)/4, $0x3de707d0
DATA gelu_a2<>+24(SB)/4, $0x3de707d0
DATA gelu_a2<>+28(SB)/4, $0x3de707d0
GLOBL gelu_a2<>(SB), RODATA|NOPTR, $32
DATA gelu_a3<>+0(SB)/4, $0xbcdaf263
DATA gelu_a3<>+4(SB)/4, $0xbcdaf263
DATA gelu_a3<>+8(SB)/4, $0xbcdaf263
DATA gelu_a3<>+12(SB)/4, $0xbcdaf263
DATA gelu_a3<>+16(SB)/4, $0xbcdaf263
DATA gelu_a3<>+20(SB)/4, $0xbcdaf263
DATA gelu_a3<>+24(SB)/4, $0xbcdaf263
DATA gelu_a3<>+28(SB)/4, $0xbcdaf263
GLOBL gelu_a3<>(SB), RODATA|NOPTR, $32
DATA gelu_a4<>+0(SB)/4, $0x3ba1b0c1
DATA gelu_a4<>+4(SB)/4, $0x3ba1b0c1
DATA gelu_a4<>+8(SB)/4, $0x3ba1b0c1
DATA gelu_a4<>+12(SB)/4, $0x3ba1b0c1
DATA gelu_a4<>+16(SB)/4, $0x3ba1b0c1
DATA gelu_a4<>+20(SB)/4, $0x3ba1b0c1
DATA gelu_a4<>+24(SB)/4, $0x3ba1b0c1
DATA gelu_a4<>+28(SB)/4, $0x3ba1b0c1
GLOBL gelu_a4<>(SB), RODATA|NOPTR, $32
DATA gelu_a5<>+0(SB)/4, $0xba15523a
DATA gelu_a5<>+4(SB)/4, $0xba15523a
DATA gelu_a5<>+8(SB)/4, $0xba15523a
DATA gelu_a5<>+12(SB)/4, $0xba15523a
DATA gelu_a5<>+16(SB)/4, $0xba15523a
DATA gelu_a5<>+20(SB)/4, $0xba15523a
DATA gelu_a5<>+24(SB)/4, $0xba15523a
DATA gelu_a5<>+28(SB)/4, $0xba15523a
GLOBL gelu_a5<>(SB), RODATA|NOPTR, $32
DATA gelu_b0<>+0(SB)/4, $0x3e907448
DATA gelu_b0<>+4(SB)/4, $0x3e907448
DATA gelu_b0<>+8(SB)/4, $0x3e907448
DATA gelu_b0<>+12(SB)/4, $0x3e907448
DATA gelu_b0<>+16(SB)/4, $0x3e907448
DATA gelu_b0<>+20(SB)/4, $0x3e907448
DATA gelu_b0<>+24(SB)/4, $0x3e907448
DATA gelu_b0<>+28(SB)/4, $0x3e907448
GLOBL gelu_b0<>(SB), RODATA|NOPTR, $32
DATA gelu_b1<>+0(SB)/4, $0x3e900e42
DATA gelu_b1<>+4(SB)/4, $0x3e900e42
DATA gelu_b1<>+8(SB)/4, $0x3e900e42
DATA gelu_b1<>+12(SB)/4, $0x3e900e42
DATA gelu_b1<>+16(SB)/4, $0x3e900e42
DATA gelu_b1<>+20(SB)/4, $0x3e900e42
DATA gelu_b1<>+24(SB)/4, $0x3e900e42
DATA gelu_b1<>+28(SB)/4, $0x3e900e42
GLOBL gelu_b1<>(SB), RODATA|NOPTR, $32
DATA gelu_b2<>+0(SB)/4, $0x3e8102d0
DATA gelu_b2<>+4(SB)/4, $0x3e8102d0
DATA gelu_b2<>+8(SB)/4, $0x3e8102d0
DATA gelu_b2<>+12(SB)/4, $0x3e8102d0
DATA gelu_b2<>+16(SB)/4, $0x3e8102d0
DATA gelu_b2<>+20(SB)/4, $0x3e8102d0
DATA gelu_b2<>+24(SB)/4, $0x3e8102d0
DATA gelu_b2<>+28(SB)/4, $0x3e8102d0
GLOBL gelu_b2<>(SB), RODATA|NOPTR, $32
DATA gelu_b3<>+0(SB)/4, $0x3e229039
DATA gelu_b3<>+4(SB)/4, $0x3e229039
DATA gelu_b3<>+8(SB)/4, $0x3e229039
DATA gelu_b3<>+12(SB)/4, $0x3e229039
DATA gelu_b3<>+16(SB)/4, $0x3e229039
DATA gelu_b3<>+20(SB)/4, $0x3e229039
DATA gelu_b3<>+24(SB)/4, $0x3e229039
DATA gelu_b3<>+28(SB)/4, $0x3e229039
GLOBL gelu_b3<>(SB), RODATA|NOPTR, $32
DATA gelu_b4<>+0(SB)/4, $0x3ddd2322
DATA gelu_b4<>+4(SB)/4, $0x3ddd2322
DATA gelu_b4<>+8(SB)/4, $0x3ddd2322
DATA gelu_b4<>+12(SB)/4, $0x3ddd2322
DATA gelu_b4<>+16(SB)/4, $0x3ddd2322
DATA gelu_b4<>+20(SB)/4, $0x3ddd2322
DATA gelu_b4<>+24(SB)/4, $0x3ddd2322
DATA gelu_b4<>+28(SB)/4, $0x3ddd2322
GLOBL gelu_b4<>(SB), RODATA|NOPTR, $32
DATA gelu_b5<>+0(SB)/4, $0x3c9161a2
DATA gelu_b5<>+4(SB)/4, $0x3c9161a2
DATA gelu_b5<>+8(SB)/4, $0x3c9161a2
DATA gelu_b5<>+12(SB)/4, $0x3c9161a2
DATA gelu_b5<>+16(SB)/4, $0x3c9161a2
DATA gelu_b5<>+20(SB)/4, $0x3c9161a2
DATA gelu_b5<>+24(SB)/4, $0x3c9161a2
DATA gelu_b5<>+28(SB)/4, $0x3c9161a2
GLOBL gelu_b5<>(SB), RODATA|NOPTR, $32
DATA gelu_b6<>+0(SB)/4, $0xbe35fdc4
DATA gelu_b6<>+4(SB)/4, $0xbe35fdc4
DATA gelu_b6<>+8(SB)/4, $0xbe35fdc4
DATA gelu_b6<>+12(SB)/4, $0xbe35fdc4
DATA gelu_b6<>+16(SB)/4, $0xbe35fdc4
DATA gelu_b6<>+20(SB)/4, $0xbe35fdc4
DATA gelu_b6<>+24(SB)/4, $0xbe35fdc4
DATA gelu_b6<>+28(SB)/4, $0xbe35fdc4
GLOBL gelu_b6<>(SB), RODATA|NOPTR, $32
DATA gelu_b7<>+0(SB)/4, $0x3da01f41
DATA gelu_b7<>+4(SB)/4, $0x3da01f41
DATA gelu_b7<>+8(SB)/4, $0x3da01f41
DATA gelu_b7<>+12(SB)/4, $0x3da01f41
DATA gelu_b7<>+16(SB)/4, $0x3da01f41
DATA gelu_b7<>+20(SB)/4, $0x3da01f41
DATA gelu_b7<>+24(SB)/4, $0x3da01f41
DATA gelu_b7<>+28(SB)/4, $0x3da01f41
GLOBL gelu_b7<>(SB), RODATA|NOPTR, $32
DATA gelu_absmask<>+0(SB)/4, $0x7fffffff
DATA gelu_absmask<>+4(SB)/4, $0x7fffffff
DATA gelu_absmask<>+8(SB)/4, $0x7fffffff
DATA gelu_absmask<>+12(SB)/4, $0x7fffffff
DATA gelu_absmask<>+16(SB)/4, $0x7fffffff
DATA gelu_absmask<>+20(SB)/4, $0x7fffffff
DATA gelu_absmask<>+24(SB)/4, $0x7fffffff
DATA gelu_absmask<>+28(SB)/4, $0x7fffffff
GLOBL gelu_absmask<>(SB), RODATA|NOPTR, $32
DATA gelu_signmask<>+0(SB)/4, $0x80000000
DATA gelu_signmask<>+4(SB)/4, $0x80000000
DATA gelu_signmask<>+8(SB)/4, $0x80000000
DATA gelu_signmask<>+12(SB)/4, $0x80000000
DATA gelu_signmask<>+16(SB)/4, $0x80000000
DATA gelu_signmask<>+20(SB)/4, $0x80000000
DATA gelu_signmask<>+24(SB)/4, $0x80000000
DATA gelu_signmask<>+28(SB)/4, $0x80000000
GLOBL gelu_signmask<>(SB), RODATA|NOPTR, $32
DATA gelu_bias<>+0(SB)/4, $0x3f800000
DATA gelu_bias<>+4(SB)/4, $0x3f800000
DATA gelu_bias<>+8(SB)/4, $0x3f800000
DATA gelu_bias<>+12(SB)/4, $0x3f800000
DATA gelu_bias<>+16(SB)/4, $0x3f800000
DATA gelu_bias<>+20(SB)/4, $0x3f800000
DATA gelu_bias<>+24(SB)/4, $0x3f800000
DATA gelu_bias<>+28(SB)/4, $0x3f800000
GLOBL gelu_bias<>(SB), RODATA|NOPTR, $32

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

