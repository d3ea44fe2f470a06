// emu.h: a CPU emulation of the CUDA builtins that the kernels of csrc/
// use, so that scripts/kernel-emu.sh can run them without a GPU: each
// block's threads run as std::threads (the blocks one after another),
// __shared__ becomes a function-level static (shared by the running block),
// __syncthreads a barrier, atomicAdd a locked add. Floating point is the
// host's IEEE arithmetic (build with -ffp-contract=off, like the PTX's
// -fmad=false); libm stands in for CUDA's math library.
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>
#include <algorithm>
using std::min; using std::max; using std::isinf;
struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
inline uint2 make_uint2(unsigned a, unsigned b) { return {a, b}; }
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
std::barrier<>* g_bar;
inline void __syncthreads() { g_bar->arrive_and_wait(); }
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
std::mutex g_atomic;
inline float atomicAdd(float* p, float v) { std::lock_guard<std::mutex> l(g_atomic); float o = *p; *p = o + v; return o; }
template <class F> void launch(dim3 grid, dim3 block, F f) {
    gridDim = grid; blockDim = block;
    for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx) {
            std::barrier<> bar(block.x);
            g_bar = &bar;
            std::vector<std::thread> ts;
            for (unsigned tx = 0; tx < block.x; ++tx)
                ts.emplace_back([&, tx] { threadIdx = {tx, 0, 0}; blockIdx = {bx, by, 0}; f(); });
            for (auto& t : ts) t.join();
        }
}
