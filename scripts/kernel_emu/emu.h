// emu.h: a CPU emulation of the CUDA builtins that the kernels of csrc/
// use, so that the kernels run without a GPU: under scripts/kernel_emu.sh
// (each kernel against the CPU backend) and inside the emulated driver
// (driver.cpp, which runs the cuda package's GPU tests). The blocks of a
// launch run one after another; the threads of a block are fibers on one
// OS thread, switched only at __syncthreads (a barrier: every fiber of the
// block runs up to it before any goes on), so a launch is deterministic.
// __shared__ becomes a function-level static, which the fibers of the
// running block share. With a seed (emu::setSeed; the emulated driver
// reads WICKEMU_SEED), the blocks of a launch and the threads of a block
// between two barriers run in a random order, different at every launch,
// as on a GPU where their order is unspecified: float atomicAdds then land
// in a different order each run (their rounding differs, as on hardware),
// and a kernel whose result depends on thread order without a barrier or
// an atomic shows it. Without a seed the order is the index order.
// Floating point is the host's IEEE arithmetic (build
// with -ffp-contract=off, like the PTX's -fmad=false); libm stands in for
// CUDA's math library. x86-64 only (the fiber switch is SysV assembly).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using std::isinf;
using std::max;
using std::min;
struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
inline uint2 make_uint2(unsigned a, unsigned b) { return {a, b}; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
// One OS thread runs every fiber, so atomics need no lock; their order is
// the order the fibers run in (random with a seed: see the top).
inline float atomicAdd(float* p, float v) { float o = *p; *p = o + v; return o; }

// The running thread's coordinates (set by the scheduler before it resumes
// a fiber; kernels read them as globals, as they read CUDA's builtins).
inline dim3 threadIdx, blockIdx, blockDim, gridDim;

// emu_switch saves the callee-saved registers and stack pointer in *from
// and resumes the context whose stack pointer is to.
extern "C" void emu_switch(void** from, void* to);
asm(R"(
	.text
	.globl emu_switch
	.hidden emu_switch
	.type emu_switch, @function
emu_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size emu_switch, .-emu_switch
)");

namespace emu {

constexpr size_t stackSize = 128 << 10;

struct Fiber {
    void* sp = nullptr;
    char* stack = nullptr;
    bool done = false;
};

inline std::vector<Fiber> fibers;
inline void* schedSP;            // the scheduler's saved stack pointer
inline Fiber* current;           // the fiber running now
inline void (*body)(void*);      // the kernel body of the running launch
inline void* bodyArg;

// The scheduling order: index order while rngState is 0, else a fresh
// random permutation for every pass (splitmix64 from the seed).
inline uint64_t rngState = 0;
inline uint64_t next() {
    uint64_t z = (rngState += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
// setSeed makes the blocks and threads run in an order drawn from seed
// (0: index order).
inline void setSeed(uint64_t seed) { rngState = seed; }
// order fills o with 0..n-1, shuffled when a seed is set.
inline void order(std::vector<unsigned>& o, unsigned n) {
    o.resize(n);
    for (unsigned i = 0; i < n; ++i) o[i] = i;
    if (rngState == 0) return;
    for (unsigned i = n; i > 1; --i) std::swap(o[i - 1], o[next() % i]);
}

[[noreturn]] inline void entry() {
    body(bodyArg);
    current->done = true;
    emu_switch(&current->sp, schedSP);
    abort(); // a finished fiber is never resumed
}

// start prepares f's stack so that switching to it calls entry().
inline void start(Fiber& f) {
    if (!f.stack) f.stack = static_cast<char*>(aligned_alloc(64, stackSize));
    auto top = reinterpret_cast<uintptr_t>(f.stack + stackSize) & ~uintptr_t(15);
    void** sp = reinterpret_cast<void**>(top - 64); // 16-aligned: after the pops and ret, rsp = top-8, as after a call
    for (int i = 0; i < 6; ++i) sp[i] = nullptr;    // r15 r14 r13 r12 rbx rbp
    sp[6] = reinterpret_cast<void*>(&entry);
    f.sp = sp;
    f.done = false;
}

// runBlock runs one block of n threads to completion.
inline void runBlock(unsigned n) {
    if (fibers.size() < n) fibers.resize(n);
    for (unsigned t = 0; t < n; ++t) start(fibers[t]);
    static std::vector<unsigned> perm;
    for (unsigned left = n; left > 0;) {
        left = 0;
        order(perm, n);
        for (unsigned t : perm) {
            Fiber& f = fibers[t];
            if (f.done) continue;
            current = &f;
            threadIdx = {t, 0, 0};
            emu_switch(&schedSP, f.sp);
            if (!f.done) left++;
        }
    }
}

template <class F> void trampoline(void* f) { (*static_cast<F*>(f))(); }

} // namespace emu

// __syncthreads parks the fiber until every thread of the block got here
// (or finished), which the scheduler's round-robin pass guarantees.
inline void __syncthreads() { emu_switch(&emu::current->sp, emu::schedSP); }

// launch runs f as the body of every thread of a grid×block launch (1-D
// blocks; 1-D or 2-D grids), the blocks in index order or, with a seed, in
// a random one.
template <class F> void launch(dim3 grid, dim3 block, F f) {
    if (block.y != 1 || block.z != 1 || grid.z != 1) {
        fprintf(stderr, "emu: only 1-D blocks and 1-D/2-D grids are emulated\n");
        abort();
    }
    gridDim = grid;
    blockDim = block;
    emu::body = emu::trampoline<F>;
    emu::bodyArg = &f;
    std::vector<unsigned> perm;
    emu::order(perm, grid.x * grid.y);
    for (unsigned b : perm) {
        blockIdx = {b % grid.x, b / grid.x, 0};
        emu::runBlock(block.x);
    }
}
