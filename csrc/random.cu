// random.cu: counter-based random numbers (Philox4x32-10, Salmon et al.
// 2011, as in Random123 and cuRAND).
//
// Element i of a draw with (seed, offset) takes word i mod 4 of
//   philox(counter = (lo(i/4), hi(i/4), lo(offset), hi(offset)),
//          key = (lo(seed), hi(seed)))
// so any element can be recomputed anywhere (cuda/random_test.go does so in
// Go). From a 32-bit word x:
//   uniform:  u = (x >> 8)·2⁻²⁴ in [0, 1)
//   normal:   Box-Muller on the word pairs (0, 1) and (2, 3) of a group:
//             u1 = ((x0 >> 8) + 1)·2⁻²⁴ in (0, 1], u2 = (x1 >> 8)·2⁻²⁴,
//             z0 = sqrt(-2 ln u1)·cos(2π u2), z1 = sqrt(-2 ln u1)·sin(2π u2)
//             (in double, rounded once)
//   dropout:  mask = u < p ? 0 : scale
//
// Shape legend: dst: (n,) contiguous.
// Launch: one thread per group of 4 elements, 1-D grid-stride over
// ceil(n/4) groups.

#include "common.cuh"

#define WICK_PHILOX_M0 0xD2511F53u
#define WICK_PHILOX_M1 0xCD9E8D57u
#define WICK_PHILOX_W0 0x9E3779B9u
#define WICK_PHILOX_W1 0xBB67AE85u

// wick_philox returns the four words of Philox4x32-10 for counter c and key k.
__device__ __forceinline__ uint4 wick_philox(uint4 c, uint2 k) {
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        if (r > 0) {
            k.x += WICK_PHILOX_W0;
            k.y += WICK_PHILOX_W1;
        }
        unsigned lo0 = WICK_PHILOX_M0 * c.x, hi0 = __umulhi(WICK_PHILOX_M0, c.x);
        unsigned lo1 = WICK_PHILOX_M1 * c.z, hi1 = __umulhi(WICK_PHILOX_M1, c.z);
        c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}

__device__ __forceinline__ uint4 wick_philox_group(i64 q, unsigned long long seed,
                                                   unsigned long long offset) {
    unsigned long long uq = (unsigned long long)q;
    return wick_philox(make_uint4((unsigned)uq, (unsigned)(uq >> 32), (unsigned)offset, (unsigned)(offset >> 32)),
                       make_uint2((unsigned)seed, (unsigned)(seed >> 32)));
}

__device__ __forceinline__ float wick_u01(unsigned x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }

__device__ __forceinline__ unsigned wick_word(uint4 w, int j) {
    return j == 0 ? w.x : j == 1 ? w.y : j == 2 ? w.z : w.w;
}

// wick_rand_uniform_f32: dst[i] = uniform in [0, 1).
extern "C" __global__ void wick_rand_uniform_f32(float* dst, i64 n, unsigned long long seed,
                                                 unsigned long long offset) {
    for (i64 q = wick_tid(); q * 4 < n; q += wick_nthreads()) {
        uint4 w = wick_philox_group(q, seed, offset);
        for (int j = 0; j < 4 && q * 4 + j < n; ++j) dst[q * 4 + j] = wick_u01(wick_word(w, j));
    }
}

// wick_rand_normal_f32: dst[i] = standard normal.
extern "C" __global__ void wick_rand_normal_f32(float* dst, i64 n, unsigned long long seed,
                                                unsigned long long offset) {
    const double two_pi = 6.283185307179586;
    for (i64 q = wick_tid(); q * 4 < n; q += wick_nthreads()) {
        uint4 w = wick_philox_group(q, seed, offset);
        for (int pr = 0; pr < 2; ++pr) {
            unsigned x0 = pr == 0 ? w.x : w.z, x1 = pr == 0 ? w.y : w.w;
            double u1 = (double)((x0 >> 8) + 1) * (1.0 / 16777216.0);
            double u2 = (double)(x1 >> 8) * (1.0 / 16777216.0);
            double r = sqrt(-2.0 * log(u1));
            i64 i = q * 4 + pr * 2;
            if (i < n) dst[i] = (float)(r * cos(two_pi * u2));
            if (i + 1 < n) dst[i + 1] = (float)(r * sin(two_pi * u2));
        }
    }
}

// wick_dropout_mask_f32: dst[i] = 0 with probability p, else scale.
extern "C" __global__ void wick_dropout_mask_f32(float* dst, i64 n, float p, float scale,
                                                 unsigned long long seed, unsigned long long offset) {
    for (i64 q = wick_tid(); q * 4 < n; q += wick_nthreads()) {
        uint4 w = wick_philox_group(q, seed, offset);
        for (int j = 0; j < 4 && q * 4 + j < n; ++j)
            dst[q * 4 + j] = wick_u01(wick_word(w, j)) < p ? 0.0f : scale;
    }
}
