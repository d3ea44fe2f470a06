// nccl.cpp: a stand-in NCCL 2, built as libnccl.so.2 by scripts/nccl_emu.sh
// next to the emulated driver (driver.cpp, whose device memory is host
// memory), so that package dist's NCCL path (-tags cuda,mpi) runs end to
// end on a machine without a GPU. It implements the entry points dist
// loads with dlsym over MPI, on the device pointers, and checks what NCCL
// or the hardware would reject:
//
//   - ncclCommInitRank: the calling thread has a CUDA context current (NCCL
//     works on the current device), the ranks agree on the world size and
//     each has its own rank, and every rank passes the same unique id,
//     which must be one that ncclGetUniqueId made (on rank 0) — so the
//     bootstrap's broadcast of the id is checked;
//   - the collectives: a known communicator, float32 and sum (the only
//     ones dist uses), a stream the driver knows with the context current
//     (cuStreamSynchronize on it must succeed), and buffers that lie inside
//     one live device allocation; the driver's guard zones are checked
//     after the call (wickemu_checked), so a write past the buffer shows.
//
// The emulated device is synchronous: a collective completes before it
// returns, where NCCL's would run later on the stream.
#include <cuda.h>
#define OMPI_SKIP_MPICXX 1 // the C API only: the library links libmpi, not the C++ bindings
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>

extern "C" int wickemu_inside(unsigned long long p, unsigned long long n);
extern "C" int wickemu_checked(const char* what, void (*f)(void*), void* arg);

namespace {

enum { ncclSuccess = 0, ncclUnhandledCudaError = 1, ncclSystemError = 2, ncclInternalError = 3,
       ncclInvalidArgument = 4, ncclInvalidUsage = 5 };
enum { ncclFloat32 = 7, ncclSum = 0 };

const char magic[] = "wickemu-nccl-id";

struct Comm {
    int nranks, rank;
    MPI_Comm comm;
};

std::mutex mu;
std::set<Comm*> comms;

int fail(int rc, const char* what) {
    fprintf(stderr, "emulated NCCL: %s\n", what);
    return rc;
}

// usable checks the stream and that a context is current on the thread.
int usable(void* stream) {
    CUcontext ctx = nullptr;
    if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == nullptr)
        return fail(ncclUnhandledCudaError, "no CUDA context is current on the calling thread");
    if (cuStreamSynchronize(static_cast<CUstream>(stream)) != CUDA_SUCCESS)
        return fail(ncclUnhandledCudaError, "the stream is not one of the current context");
    return ncclSuccess;
}

struct Call {
    const void* send;
    void* recv;
    size_t count;
    int root; // -1: all-reduce
    Comm* c;
    int rc;
};

void run(void* arg) {
    auto& a = *static_cast<Call*>(arg);
    char* recv = static_cast<char*>(a.recv);
    const char* send = static_cast<const char*>(a.send);
    for (size_t done = 0; done < a.count;) {
        int n = (int)std::min<size_t>(a.count - done, 1 << 30);
        int rc;
        if (a.root < 0)
            rc = MPI_Allreduce(send == recv ? MPI_IN_PLACE : send + 4 * done, recv + 4 * done, n, MPI_FLOAT, MPI_SUM, a.c->comm);
        else {
            if (a.c->rank == a.root && send != recv) memcpy(recv + 4 * done, send + 4 * done, 4 * (size_t)n);
            rc = MPI_Bcast(recv + 4 * done, n, MPI_FLOAT, a.root, a.c->comm);
        }
        if (rc != MPI_SUCCESS) {
            a.rc = fail(ncclSystemError, "MPI failed under a collective");
            return;
        }
        done += n;
    }
    a.rc = ncclSuccess;
}

int collective(const char* name, const void* send, void* recv, size_t count, int type, int op, int root, void* comm, void* stream) {
    Comm* c = static_cast<Comm*>(comm);
    {
        std::lock_guard<std::mutex> lock(mu);
        if (!comms.count(c)) return fail(ncclInvalidArgument, "a collective on a communicator that does not exist");
    }
    if (type != ncclFloat32 || op != ncclSum) return fail(ncclInvalidArgument, "only float32 sums are emulated");
    if (root >= c->nranks) return fail(ncclInvalidArgument, "the root is not a rank");
    if (int rc = usable(stream)) return rc;
    if (count == 0) return ncclSuccess;
    if (!wickemu_inside((uintptr_t)recv, 4 * count) || !wickemu_inside((uintptr_t)send, 4 * count))
        return fail(ncclInvalidArgument, "a buffer is not inside one device allocation (an illegal address on a GPU)");
    Call a{send, recv, count, root, c, ncclInternalError};
    if (!wickemu_checked(name, run, &a)) return fail(ncclUnhandledCudaError, "a guard zone was overwritten");
    return a.rc;
}

} // namespace

extern "C" {

typedef struct { char internal[128]; } ncclUniqueId;

int ncclGetVersion(int* version) {
    *version = 21805; // 2.18.5
    return ncclSuccess;
}

int ncclGetUniqueId(ncclUniqueId* id) {
    memset(id->internal, 0, sizeof id->internal);
    memcpy(id->internal, magic, sizeof magic);
    std::random_device rd;
    for (size_t i = sizeof magic; i < sizeof id->internal; i++) id->internal[i] = (char)rd();
    return ncclSuccess;
}

int ncclCommInitRank(void** comm, int nranks, ncclUniqueId id, int rank) {
    CUcontext ctx = nullptr;
    if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == nullptr)
        return fail(ncclUnhandledCudaError, "ncclCommInitRank: no CUDA context is current on the calling thread");
    int inited = 0, size = 0, me = 0;
    MPI_Initialized(&inited);
    if (!inited) return fail(ncclSystemError, "ncclCommInitRank: the emulation runs over MPI, and MPI is not initialised");
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (nranks != size || rank != me) return fail(ncclInvalidUsage, "ncclCommInitRank: the emulation needs nranks and rank to be MPI_COMM_WORLD's");
    // Collective from here on, so that a wrong id fails on every rank
    // rather than leaving the others waiting.
    auto* c = new Comm{nranks, rank, MPI_COMM_NULL};
    if (MPI_Comm_dup(MPI_COMM_WORLD, &c->comm) != MPI_SUCCESS) return fail(ncclSystemError, "ncclCommInitRank: MPI_Comm_dup failed");
    ncclUniqueId root = id;
    MPI_Bcast(root.internal, sizeof root.internal, MPI_BYTE, 0, c->comm);
    int ok = memcmp(root.internal, id.internal, sizeof id.internal) == 0 && memcmp(id.internal, magic, sizeof magic) == 0, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, c->comm);
    if (!all) {
        MPI_Comm_free(&c->comm);
        delete c;
        return fail(ncclInvalidUsage, ok ? "ncclCommInitRank: another rank passed another unique id"
                                         : "ncclCommInitRank: this rank's unique id is not rank 0's, or not one that ncclGetUniqueId made");
    }
    std::lock_guard<std::mutex> lock(mu);
    comms.insert(c);
    *comm = c;
    return ncclSuccess;
}

int ncclAllReduce(const void* send, void* recv, size_t count, int type, int op, void* comm, void* stream) {
    return collective("ncclAllReduce", send, recv, count, type, op, -1, comm, stream);
}

int ncclBroadcast(const void* send, void* recv, size_t count, int type, int root, void* comm, void* stream) {
    if (root < 0) return fail(ncclInvalidArgument, "a negative root");
    return collective("ncclBroadcast", send, recv, count, type, ncclSum, root, comm, stream);
}

int ncclCommDestroy(void* comm) {
    Comm* c = static_cast<Comm*>(comm);
    std::lock_guard<std::mutex> lock(mu);
    if (!comms.erase(c)) return fail(ncclInvalidArgument, "ncclCommDestroy of a communicator that does not exist");
    MPI_Comm_free(&c->comm);
    delete c;
    return ncclSuccess;
}

const char* ncclGetErrorString(int rc) {
    switch (rc) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    }
    return "unknown result code";
}

} // extern "C"
