// The constants of the GELU and exp kernels: 32-byte vectors of one
// repeated float32 (bit patterns of the constants in vec.go).
// kernels_amd64.s and the previous GELU kernels of gelu_prev_amd64.s,
// the test oracle of the current ones, include them; each file gets its
// own static copy.

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
