// driver.cpp: an emulated CUDA driver, built as libcuda.so.1 by
// scripts/cuda_emu.sh, so that the -tags cuda test binaries run their GPU
// tests on a machine without a GPU: loaded through LD_LIBRARY_PATH in place
// of NVIDIA's libcuda.so.1, it reports one device and runs every kernel of
// csrc/ on the CPU under emu.h.
//
// It implements the part of the driver API that the cuda package calls, and
// checks what a real driver would reject or fault on:
//
//   - the calling OS thread must have the context current (thread-local, as
//     in the driver) for memory, stream, module and launch calls;
//   - launches: a known function, block and grid limits, no dynamic shared
//     memory, the argument count and sizes of the PTX's .entry, row kernels
//     at WICK_ROWTHREADS;
//   - copies and memsets must lie inside one live allocation, a
//     device-to-device copy's ranges must not overlap, and an asynchronous
//     host-to-device copy must read pinned memory (cuMemAllocHost);
//   - every allocation has guard zones of NaNs: a kernel that reads outside
//     its allocation reads NaN, and a launch, copy or cuBLAS call that
//     writes there is reported as CUDA_ERROR_ILLEGAL_ADDRESS (sticky, as on
//     a GPU), naming the kernel;
//   - fresh allocations are filled with 0xFF bytes (NaN as float32), so an
//     element no kernel writes shows up.
//
// Work queued on a stream runs at once (the emulated device is synchronous),
// so it cannot show races between the stream and the host. The other driver
// entry points the binary links are stubs (stubs.c, generated) that print
// their name and fail with CUDA_ERROR_NOT_SUPPORTED.
//
// WICKEMU_MEM sets the device memory in bytes (default 4 GiB), to exercise
// out-of-memory paths. WICKEMU_SEED (a number other than 0) runs the blocks
// and threads of every launch in a random order drawn from it (emu.h), so
// that float atomicAdds land in a different order at every launch, as on a
// GPU; scripts/cuda_emu.sh sets it and prints it. WICKEMU_NODEVICE=1 makes
// cuInit fail with CUDA_ERROR_NO_DEVICE, as on a machine without a GPU.
#include "emu.h"
#include "../../csrc/wick.cu"
#include <cuda.h>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

namespace {

std::recursive_mutex mu; // the driver is thread-safe; the emulation is not
CUresult sticky = CUDA_SUCCESS;
bool initialised = false;

// A context handle, a stream handle and a module handle: addresses of these.
char primaryCtx, theStream;
struct Module { bool loaded; };
thread_local CUcontext current = nullptr;

constexpr size_t guard = 256;
// The guard zones repeat the float32 NaN 0x7fa5a5a5, which no kernel
// writes: a kernel that reads past its allocation gets NaN, which shows in
// its output, and one that writes there changes the pattern.
const std::vector<unsigned char>& guardPattern() {
    static const std::vector<unsigned char> p = [] {
        std::vector<unsigned char> v(guard);
        for (size_t i = 0; i < guard; i += 4) v[i] = v[i + 1] = v[i + 2] = 0xA5, v[i + 3] = 0x7F;
        return v;
    }();
    return p;
}

struct Alloc { size_t size; };
std::map<uintptr_t, Alloc> allocs; // payload address -> size
size_t used = 0;

size_t capacity() {
    static size_t cap = [] {
        const char* s = getenv("WICKEMU_MEM");
        return s ? (size_t)strtoull(s, nullptr, 10) : (size_t)4 << 30;
    }();
    return cap;
}

void report(const char* fmt, const std::string& a, const std::string& b = "") {
    fprintf(stderr, "emulated CUDA driver: ");
    fprintf(stderr, fmt, a.c_str(), b.c_str());
    fputc('\n', stderr);
}

// guardsIntact checks every allocation's guard zones after an operation
// named what wrote to device memory.
bool guardsIntact(const std::string& what) {
    const auto& pattern = guardPattern();
    for (auto& [p, a] : allocs) {
        auto* lo = reinterpret_cast<unsigned char*>(p) - guard;
        auto* hi = reinterpret_cast<unsigned char*>(p) + a.size;
        if (memcmp(lo, pattern.data(), guard) != 0 || memcmp(hi, pattern.data(), guard) != 0) {
            report("%s wrote outside an allocation of %s bytes", what, std::to_string(a.size));
            sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
            return false;
        }
    }
    return true;
}

// inside reports whether [p, p+n) lies within one live allocation.
bool inside(uintptr_t p, size_t n) {
    auto it = allocs.upper_bound(p);
    if (it == allocs.begin()) return false;
    --it;
    return p >= it->first && p + n <= it->first + it->second.size;
}

// Entry is a kernel of csrc/ with the sizes of its parameters.
struct Entry {
    void (*run)(void* kernel, void** params, dim3 grid, dim3 block);
    void* kernel;
    std::vector<size_t> sizes;
    bool inPTX = false;
    bool rowKernel = false; // it declares __shared__ memory: a block-per-row kernel
};

// ptxRowThreads is WICK_ROWTHREADS as the PTX was compiled. The emulation
// is compiled with a smaller WICK_ROWTHREADS (fewer fibers: eight times
// less switching), and runs a row kernel launched with ptxRowThreads
// threads with WICK_ROWTHREADS instead: the row kernels stride over their
// row by blockDim.x and reduce over WICK_ROWTHREADS, so they are correct
// for any power of two (scripts/kernel_emu.sh runs them at 256).
constexpr unsigned ptxRowThreads = 256;

template <class... A, size_t... I>
void runWith(void* k, void** p, dim3 grid, dim3 block, std::index_sequence<I...>) {
    // The driver copies the arguments at launch time.
    std::tuple<A...> args{*static_cast<A*>(p[I])...};
    auto fn = reinterpret_cast<void (*)(A...)>(k);
    launch(grid, block, [&] { std::apply(fn, args); });
}

template <class... A> Entry entry(void (*k)(A...)) {
    return Entry{[](void* kk, void** p, dim3 g, dim3 b) { runWith<A...>(kk, p, g, b, std::index_sequence_for<A...>{}); },
                 reinterpret_cast<void*>(k), {sizeof(A)...}};
}

std::map<std::string, Entry>& table() {
    static std::map<std::string, Entry> t = {
#define K(name) {#name, entry(name)},
#include "kernels.inc"
#undef K
    };
    return t;
}

size_t ptxParamSize(const std::string& type) {
    if (type == ".u64" || type == ".s64" || type == ".b64" || type == ".f64") return 8;
    if (type == ".u32" || type == ".s32" || type == ".b32" || type == ".f32") return 4;
    if (type == ".u16" || type == ".s16" || type == ".b16") return 2;
    if (type == ".u8" || type == ".s8" || type == ".b8") return 1;
    return 0;
}

// checkPTX matches each .entry of the PTX with the emulated kernel of the
// same name and its parameter sizes; false (and a message) on a mismatch.
bool checkPTX(const std::string& ptx) {
    auto& t = table();
    size_t pos = 0;
    bool ok = true;
    while ((pos = ptx.find(".entry ", pos)) != std::string::npos) {
        pos += 7;
        size_t open = ptx.find('(', pos), close = ptx.find(')', open);
        std::string name = ptx.substr(pos, open - pos);
        while (!name.empty() && isspace((unsigned char)name.back())) name.pop_back();
        std::vector<size_t> sizes;
        for (size_t q = ptx.find(".param", open); q < close; q = ptx.find(".param", q + 6)) {
            size_t s = q + 7, e = ptx.find_first_of(" \t", s);
            sizes.push_back(ptxParamSize(ptx.substr(s, e - s)));
        }
        size_t next = ptx.find(".entry ", close);
        bool shared = ptx.substr(close, next == std::string::npos ? std::string::npos : next - close).find(".shared ") != std::string::npos;
        auto it = t.find(name);
        if (it == t.end()) {
            report("the PTX has a kernel %s that the emulation does not know", name);
            ok = false;
            continue;
        }
        if (it->second.sizes != sizes) {
            report("kernel %s: the PTX's parameters differ from csrc/'s signature", name);
            ok = false;
        }
        it->second.inPTX = true;
        it->second.rowKernel = shared;
    }
    return ok;
}

#define LOCK std::lock_guard<std::recursive_mutex> lock(mu)
#define NEED_INIT \
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED
#define NEED_CTX                                   \
    NEED_INIT;                                     \
    if (current == nullptr) return CUDA_ERROR_INVALID_CONTEXT; \
    if (sticky != CUDA_SUCCESS) return sticky

bool validStream(CUstream s) { return s == nullptr || s == reinterpret_cast<CUstream>(&theStream); }

} // namespace

extern "C" {

// wickemu_inside is for the emulated cuBLAS: whether [p, p+n) is device
// memory of one live allocation.
int wickemu_inside(unsigned long long p, unsigned long long n) {
    LOCK;
    return inside(p, n);
}

// wickemu_checked runs f (a cuBLAS call) and checks the guard zones after it.
int wickemu_checked(const char* what, void (*f)(void*), void* arg) {
    LOCK;
    f(arg);
    return guardsIntact(what);
}

// With WICKEMU_REENTER_CUINIT=1, cuInit calls cuInit by name from inside
// itself once, as a tool injected into the driver (compute-sanitizer,
// Nsight Systems) may: the call reaches the program's interposed cuInit
// (cuda/cuinit.c), which must forward it here rather than wait for its own
// pthread_once. A nested call that fails makes the outer one fail.
thread_local int cuInitDepth = 0;

CUresult cuInit(unsigned int flags) {
    LOCK;
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (cuInitDepth == 0 && getenv("WICKEMU_REENTER_CUINIT")) {
        auto byName = reinterpret_cast<CUresult (*)(unsigned)>(dlsym(RTLD_DEFAULT, "cuInit"));
        cuInitDepth++;
        CUresult r = byName ? byName(0) : CUDA_ERROR_NOT_FOUND;
        cuInitDepth--;
        if (r != CUDA_SUCCESS) return r;
    }
    if (const char* none = getenv("WICKEMU_NODEVICE"); none && strcmp(none, "1") == 0) return CUDA_ERROR_NO_DEVICE;
    if (!initialised)
        if (const char* seed = getenv("WICKEMU_SEED")) emu::setSeed(strtoull(seed, nullptr, 10));
    initialised = true;
    return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult r, const char** name) {
    static const std::map<int, const char*> names{
        {(int)CUDA_SUCCESS, "CUDA_SUCCESS"},
        {(int)CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
        {(int)CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
        {(int)CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
        {35 /* CUDA_ERROR_INSUFFICIENT_DRIVER */, "CUDA_ERROR_INSUFFICIENT_DRIVER"},
        {(int)CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
        {(int)CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
        {(int)CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
        {(int)CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
        {(int)CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX"},
        {(int)CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
        {(int)CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
        {(int)CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
        {(int)CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED"},
        {(int)CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"},
    };
    auto it = names.find((int)r);
    if (it == names.end()) {
        *name = nullptr;
        return CUDA_ERROR_INVALID_VALUE;
    }
    *name = it->second;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* v) {
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    *v = 12080;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* n) {
    NEED_INIT;
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *n = 1;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* d, int ordinal) {
    NEED_INIT;
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
    NEED_INIT;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, len, "Wick emulated GPU (CPU)");
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice d) {
    NEED_INIT;
    if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
    *ctx = reinterpret_cast<CUcontext>(&primaryCtx);
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
    NEED_INIT;
    if (ctx != nullptr && ctx != reinterpret_cast<CUcontext>(&primaryCtx)) return CUDA_ERROR_INVALID_CONTEXT;
    current = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext* ctx) {
    NEED_INIT;
    *ctx = current;
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) {
    LOCK;
    NEED_CTX;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream* s, unsigned int flags) {
    LOCK;
    NEED_CTX;
    *s = reinterpret_cast<CUstream>(&theStream);
    return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream s) {
    LOCK;
    NEED_CTX;
    return validStream(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuStreamDestroy(CUstream s) {
    LOCK;
    NEED_CTX;
    return validStream(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned int, CUjit_option*, void**) {
    LOCK;
    NEED_CTX;
    std::string ptx(static_cast<const char*>(image));
    if (ptx.find(".version") == std::string::npos || ptx.find(".target") == std::string::npos)
        return CUDA_ERROR_INVALID_IMAGE;
    if (!checkPTX(ptx)) return CUDA_ERROR_INVALID_PTX;
    *m = reinterpret_cast<CUmodule>(new Module{true});
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule* m, const void* image) { return cuModuleLoadDataEx(m, image, 0, nullptr, nullptr); }

CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
    LOCK;
    NEED_CTX;
    if (!m || !name) return CUDA_ERROR_INVALID_HANDLE;
    auto it = table().find(name);
    if (it == table().end() || !it->second.inPTX) return CUDA_ERROR_NOT_FOUND;
    *f = reinterpret_cast<CUfunction>(&*it);
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, CUstream s, void** params, void** extra) {
    LOCK;
    NEED_CTX;
    if (!f || !validStream(s)) return CUDA_ERROR_INVALID_HANDLE;
    auto& [name, e] = *reinterpret_cast<std::pair<const std::string, Entry>*>(f);
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || (unsigned long long)bx * by * bz > 1024 ||
        gx > 0x7fffffffu || gy > 65535 || gz > 65535 || bz > 64) {
        report("%s: launch shape out of range", name);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (shared != 0 || extra != nullptr || (params == nullptr && !e.sizes.empty())) {
        report("%s: unexpected dynamic shared memory or argument form", name);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (e.rowKernel) {
        if (bx != ptxRowThreads || by != 1 || bz != 1) {
            report("%s: a row kernel launched with %s threads, not WICK_ROWTHREADS", name, std::to_string(bx));
            return CUDA_ERROR_INVALID_VALUE;
        }
        bx = WICK_ROWTHREADS;
    }
    e.run(e.kernel, params, dim3{gx, gy, gz}, dim3{bx, by, bz});
    if (!guardsIntact("kernel " + name)) return sticky;
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo(size_t* freeBytes, size_t* total) {
    LOCK;
    NEED_CTX;
    *total = capacity();
    *freeBytes = capacity() - used;
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr* p, size_t n) {
    LOCK;
    NEED_CTX;
    if (n == 0) return CUDA_ERROR_INVALID_VALUE;
    if (used + n > capacity()) return CUDA_ERROR_OUT_OF_MEMORY;
    size_t padded = (n + 255) / 256 * 256 + 2 * guard;
    auto* raw = static_cast<unsigned char*>(aligned_alloc(256, padded));
    if (!raw) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(raw, guardPattern().data(), guard);
    memset(raw + guard, 0xFF, n);
    memcpy(raw + guard + n, guardPattern().data(), guard);
    uintptr_t payload = reinterpret_cast<uintptr_t>(raw + guard);
    allocs[payload] = Alloc{n};
    used += n;
    *p = payload;
    return CUDA_SUCCESS;
}

CUresult cuMemFree(CUdeviceptr p) {
    LOCK;
    NEED_CTX;
    auto it = allocs.find(p);
    if (it == allocs.end()) {
        report("cuMemFree of %s, which is not the start of a live allocation", std::to_string(p));
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!guardsIntact("the work before cuMemFree")) return sticky;
    used -= it->second.size;
    free(reinterpret_cast<unsigned char*>(p) - guard);
    allocs.erase(it);
    return CUDA_SUCCESS;
}

// STREAM_OP begins a copy or memset of n units queued on stream s.
#define STREAM_OP(s, n)                                        \
    LOCK;                                                      \
    NEED_CTX;                                                  \
    if (!validStream(s)) return CUDA_ERROR_INVALID_HANDLE;     \
    if ((n) == 0) return CUDA_SUCCESS

#define RANGE(p, n, what)                                                             \
    if (!inside(p, n)) {                                                              \
        report("%s of %s bytes outside any allocation", what, std::to_string(n));    \
        return CUDA_ERROR_INVALID_VALUE;                                              \
    }

// Pinned host memory (cuMemAllocHost): payload address -> size.
std::map<uintptr_t, size_t> pinned;

bool inPinned(uintptr_t p, size_t n) {
    auto it = pinned.upper_bound(p);
    if (it == pinned.begin()) return false;
    --it;
    return p >= it->first && p + n <= it->first + it->second;
}

// The asynchronous copy from the host must read pinned memory: from
// pageable memory the driver may return before it has read the source, and
// a Go slice may be reclaimed by then (cuda/staging.go).
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
    STREAM_OP(s, n);
    RANGE(dst, n, "cuMemcpyHtoD");
    if (!inPinned(reinterpret_cast<uintptr_t>(src), n)) {
        report("cuMemcpyHtoDAsync of %s bytes from pageable host memory (stage it through cuMemAllocHost memory)", std::to_string(n));
        return CUDA_ERROR_INVALID_VALUE;
    }
    memcpy(reinterpret_cast<void*>(dst), src, n);
    return CUDA_SUCCESS;
}

CUresult cuMemAllocHost_v2(void** p, size_t n) {
    LOCK;
    NEED_CTX;
    if (!p || n == 0) return CUDA_ERROR_INVALID_VALUE;
    *p = malloc(n);
    if (!*p) return CUDA_ERROR_OUT_OF_MEMORY;
    memset(*p, 0xFF, n);
    pinned[reinterpret_cast<uintptr_t>(*p)] = n;
    return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void* p) {
    LOCK;
    NEED_CTX;
    if (pinned.erase(reinterpret_cast<uintptr_t>(p)) == 0) return CUDA_ERROR_INVALID_VALUE;
    free(p);
    return CUDA_SUCCESS;
}

// Events: the emulated stream runs everything at once, so an event is
// complete as soon as it is recorded; recording and waiting check the
// handles and the context.
struct Event { bool recorded = false; };

CUresult cuEventCreate(CUevent* e, unsigned int flags) {
    LOCK;
    NEED_CTX;
    if (!e) return CUDA_ERROR_INVALID_VALUE;
    *e = reinterpret_cast<CUevent>(new Event);
    return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent e, CUstream s) {
    LOCK;
    NEED_CTX;
    if (!e || !validStream(s)) return CUDA_ERROR_INVALID_HANDLE;
    reinterpret_cast<Event*>(e)->recorded = true;
    return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent e) {
    LOCK;
    NEED_CTX;
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent e) {
    LOCK;
    NEED_CTX;
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    delete reinterpret_cast<Event*>(e);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t n, CUstream s) {
    STREAM_OP(s, n);
    RANGE(src, n, "cuMemcpyDtoH");
    memcpy(dst, reinterpret_cast<void*>(src), n);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    STREAM_OP(s, n);
    RANGE(dst, n, "cuMemcpyDtoD destination");
    RANGE(src, n, "cuMemcpyDtoD source");
    if (dst != src && dst < src + n && src < dst + n) {
        // undefined on a GPU (the copy engine runs in any order)
        report("cuMemcpyDtoD of %s bytes between overlapping ranges", std::to_string(n));
        return CUDA_ERROR_INVALID_VALUE;
    }
    memmove(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), n);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) {
    // synchronous: any host memory
    STREAM_OP(nullptr, n);
    RANGE(dst, n, "cuMemcpyHtoD");
    memcpy(reinterpret_cast<void*>(dst), src, n);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) { return cuMemcpyDtoHAsync(dst, src, n, nullptr); }
CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) { return cuMemcpyDtoDAsync(dst, src, n, nullptr); }

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
    STREAM_OP(s, n);
    RANGE(dst, n, "cuMemsetD8");
    memset(reinterpret_cast<void*>(dst), v, n);
    return CUDA_SUCCESS;
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s) {
    STREAM_OP(s, n);
    if (dst % 4 != 0) return CUDA_ERROR_INVALID_VALUE;
    RANGE(dst, 4 * n, "cuMemsetD32");
    auto* p = reinterpret_cast<unsigned int*>(dst);
    for (size_t i = 0; i < n; ++i) p[i] = v;
    return CUDA_SUCCESS;
}

CUresult cuMemsetD8(CUdeviceptr dst, unsigned char v, size_t n) { return cuMemsetD8Async(dst, v, n, nullptr); }
CUresult cuMemsetD32(CUdeviceptr dst, unsigned int v, size_t n) { return cuMemsetD32Async(dst, v, n, nullptr); }

} // extern "C"
