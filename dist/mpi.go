//go:build mpi

// Keep in sync with stub.go: both define initWorld and Transports.

package dist

/*
#cgo !mpicc pkg-config: mpi
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WICK_TIMEOUT (-1)

// wick_mpi_init joins MPI_COMM_WORLD (unless the program already did) and
// reports this process's rank, the world size, the rank among the
// processes that share its node, the thread level MPI provides, and the
// library's version line.
static int wick_mpi_init(int *rank, int *size, int *local, int *provided, char *version, int vlen) {
	int inited = 0, rc;
	MPI_Initialized(&inited);
	if (!inited) {
		rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
		if (rc != MPI_SUCCESS) return rc;
	} else {
		MPI_Query_thread(provided);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	MPI_Comm node;
	rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node);
	if (rc != MPI_SUCCESS) return rc;
	MPI_Comm_rank(node, local);
	MPI_Comm_free(&node);
	char buf[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0;
	MPI_Get_library_version(buf, &n);
	int i = 0;
	while (i < n && i < vlen - 1 && buf[i] != '\n' && buf[i] != ',' && buf[i] != 0) { version[i] = buf[i]; i++; }
	version[i] = 0;
	return MPI_SUCCESS;
}

static int wick_serialized(int provided) { return provided >= MPI_THREAD_SERIALIZED; }

// wick_wait completes req, giving up after timeout seconds (≤ 0: never)
// with WICK_TIMEOUT. It polls MPI_Test, as MPI's blocking calls do, and
// after the first millisecond sleeps 20 µs between polls, so that a rank
// waiting for a slower one leaves the cores to the work.
static int wick_wait(MPI_Request *req, double timeout) {
	double start = MPI_Wtime();
	struct timespec nap = {0, 20000};
	for (;;) {
		int done = 0;
		int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS) return rc;
		if (done) return MPI_SUCCESS;
		double waited = MPI_Wtime() - start;
		if (timeout > 0 && waited > timeout) return WICK_TIMEOUT;
		if (waited > 1e-3) nanosleep(&nap, NULL);
	}
}

static int wick_iallreduce_sum_f32(float *buf, int n, double timeout) {
	MPI_Request req;
	int rc = MPI_Iallreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
	return rc != MPI_SUCCESS ? rc : wick_wait(&req, timeout);
}

static int wick_allreduce_sum_f32(float *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static int wick_bcast(void *buf, int n, MPI_Datatype t, int root, double timeout) {
	MPI_Request req;
	int rc = MPI_Ibcast(buf, n, t, root, MPI_COMM_WORLD, &req);
	return rc != MPI_SUCCESS ? rc : wick_wait(&req, timeout);
}
static int wick_bcast_f32(float *buf, int n, int root, double timeout) { return wick_bcast(buf, n, MPI_FLOAT, root, timeout); }
static int wick_bcast_bytes(char *buf, int n, int root, double timeout) { return wick_bcast(buf, n, MPI_BYTE, root, timeout); }

static int wick_allgather_int(int v, int *out, double timeout) {
	MPI_Request req;
	int rc = MPI_Iallgather(&v, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD, &req);
	return rc != MPI_SUCCESS ? rc : wick_wait(&req, timeout);
}

static int wick_allgatherv_bytes(char *send, int n, char *recv, int *counts, int *displs, double timeout) {
	MPI_Request req;
	int rc = MPI_Iallgatherv(send, n, MPI_BYTE, recv, counts, displs, MPI_BYTE, MPI_COMM_WORLD, &req);
	return rc != MPI_SUCCESS ? rc : wick_wait(&req, timeout);
}

static int wick_barrier(double timeout) {
	MPI_Request req;
	int rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
	return rc != MPI_SUCCESS ? rc : wick_wait(&req, timeout);
}

// wick_scale_f32 sets dst[i] = src[i]*s (dst == src allowed), vectorised.
__attribute__((optimize("O3"))) static void wick_scale_f32(float *restrict dst, const float *src, long n, float s) {
	if (dst == src) {
		for (long i = 0; i < n; i++) dst[i] *= s;
	} else {
		for (long i = 0; i < n; i++) dst[i] = src[i] * s;
	}
}

static int wick_finalize(void) { return MPI_Finalize(); }
static int wick_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }

static void wick_error_string(int rc, char *out, int len) {
	char buf[MPI_MAX_ERROR_STRING];
	int n = 0;
	if (MPI_Error_string(rc, buf, &n) != MPI_SUCCESS) n = 0;
	if (n >= len) n = len - 1;
	memcpy(out, buf, n);
	out[n] = 0;
}
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"time"
	"unsafe"
)

// Transports says which ways of reaching other processes this binary was
// built with.
const Transports = "mpi"

// maxCount is the largest element count one MPI call takes (an int).
const maxCount = math.MaxInt32

// mpiTransport calls MPI's nonblocking collectives and waits for them in C
// (wick_wait), which bounds the wait by the Comm's timeout without another
// goroutine, except for large all-reduces (see smallReduce). MPI_Init_thread and MPI_Finalize run on one locked OS thread
// (MPI's main thread); the collectives run on the caller's thread when MPI
// provides MPI_THREAD_SERIALIZED (the Comm serialises them), else on the
// locked thread too.
type mpiTransport struct {
	main    chan func() // runs closures on the locked thread
	direct  bool        // MPI_THREAD_SERIALIZED: collectives on any thread
	size    int         // ranks in MPI_COMM_WORLD
	timeout C.double    // seconds; ≤ 0: wait forever
}

func (m *mpiTransport) serve() {
	runtime.LockOSThread() // never unlocked: MPI was initialised on this thread
	for f := range m.main {
		f()
	}
}

// onMain runs f on MPI's main thread.
func (m *mpiTransport) onMain(f func() C.int) C.int {
	done := make(chan C.int, 1)
	m.main <- func() { done <- f() }
	return <-done
}

// do runs the collective f and turns its code into an error.
func (m *mpiTransport) do(f func() C.int) error {
	var rc C.int
	if m.direct {
		rc = f()
	} else {
		rc = m.onMain(f)
	}
	return mpiError(rc)
}

func mpiError(rc C.int) error {
	switch rc {
	case C.MPI_SUCCESS:
		return nil
	case C.WICK_TIMEOUT:
		return errTimeout
	}
	buf := make([]byte, 512)
	C.wick_error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)))
	return fmt.Errorf("MPI error %d: %s", int(rc), C.GoString((*C.char)(unsafe.Pointer(&buf[0]))))
}

// initWorld joins MPI_COMM_WORLD.
func initWorld() (*Comm, error) {
	m := &mpiTransport{main: make(chan func())}
	go m.serve()
	var rank, size, local, provided C.int
	version := make([]byte, 128)
	rc := m.onMain(func() C.int {
		return C.wick_mpi_init(&rank, &size, &local, &provided, (*C.char)(unsafe.Pointer(&version[0])), C.int(len(version)))
	})
	if err := mpiError(rc); err != nil {
		return nil, fmt.Errorf("dist: MPI_Init_thread: %w", err)
	}
	m.direct = C.wick_serialized(provided) != 0
	m.size = int(size)
	name := C.GoString((*C.char)(unsafe.Pointer(&version[0])))
	return &Comm{tr: m, rank: int(rank), size: int(size), localRank: int(local), backend: "mpi (" + name + ")"}, nil
}

// setTimeout makes every wait give up after d (≤ 0: never); Comm.call
// then needs no goroutine of its own to bound the wait.
func (m *mpiTransport) setTimeout(d time.Duration) { m.timeout = C.double(d.Seconds()) }

// smallReduce is the element count up to which allReduceSum waits in C
// (wick_wait: a waiting rank naps); larger reductions, the gradient
// buckets, call the blocking MPI_Allreduce, whose tuned algorithms are
// several times faster than the nonblocking ones in Open MPI 4 (libnbc),
// and bound the wait with a timer instead.
const smallReduce = 4096

func (m *mpiTransport) allReduceSum(buf []float32) error {
	if len(buf) <= smallReduce {
		if len(buf) == 0 {
			return nil
		}
		return m.do(func() C.int {
			return C.wick_iallreduce_sum_f32((*C.float)(&buf[0]), C.int(len(buf)), m.timeout)
		})
	}
	for len(buf) > 0 {
		n := min(len(buf), maxCount)
		chunk := buf[:n]
		if err := m.blocking(func() C.int { return C.wick_allreduce_sum_f32((*C.float)(&chunk[0]), C.int(n)) }); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

// blocking runs a blocking MPI call f, giving up after the timeout: f
// then runs on, on a goroutine of its own, and the Comm is broken.
func (m *mpiTransport) blocking(f func() C.int) error {
	if m.timeout <= 0 {
		return m.do(f)
	}
	done := make(chan error, 1)
	go func() { done <- m.do(f) }()
	timer := time.NewTimer(time.Duration(float64(m.timeout) * float64(time.Second)))
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return errTimeout
	}
}

func (m *mpiTransport) broadcast(buf []float32, root int) error {
	for len(buf) > 0 {
		n := min(len(buf), maxCount)
		chunk := buf[:n]
		if err := m.do(func() C.int {
			return C.wick_bcast_f32((*C.float)(&chunk[0]), C.int(n), C.int(root), m.timeout)
		}); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

func (m *mpiTransport) broadcastBytes(buf []byte, root int) error {
	for len(buf) > 0 {
		n := min(len(buf), maxCount)
		chunk := buf[:n]
		if err := m.do(func() C.int {
			return C.wick_bcast_bytes((*C.char)(unsafe.Pointer(&chunk[0])), C.int(n), C.int(root), m.timeout)
		}); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

func (m *mpiTransport) allGather(b []byte) ([][]byte, error) {
	if len(b) > maxCount {
		return nil, fmt.Errorf("AllGather of %d bytes: at most %d", len(b), maxCount)
	}
	counts := make([]C.int, m.size)
	if err := m.do(func() C.int { return C.wick_allgather_int(C.int(len(b)), &counts[0], m.timeout) }); err != nil {
		return nil, err
	}
	displs := make([]C.int, len(counts))
	total := 0
	for i, n := range counts {
		if total+int(n) > maxCount {
			return nil, fmt.Errorf("AllGather of %d bytes in all: at most %d", total+int(n), maxCount)
		}
		displs[i] = C.int(total)
		total += int(n)
	}
	recv := make([]byte, total+1) // +1: never a zero-length buffer
	send := append(append([]byte(nil), b...), 0)
	if err := m.do(func() C.int {
		return C.wick_allgatherv_bytes((*C.char)(unsafe.Pointer(&send[0])), C.int(len(b)),
			(*C.char)(unsafe.Pointer(&recv[0])), &counts[0], &displs[0], m.timeout)
	}); err != nil {
		return nil, err
	}
	out := make([][]byte, len(counts))
	for i, n := range counts {
		out[i] = recv[int(displs[i]) : int(displs[i])+int(n) : int(displs[i])+int(n)]
	}
	return out, nil
}

// scale sets dst[i] = src[i]·s in C, where the compiler vectorises the
// loop (Go's does not), for the means of AllReduce and SyncGrads.
func (m *mpiTransport) scale(dst, src []float32, s float32) {
	C.wick_scale_f32((*C.float)(&dst[0]), (*C.float)(&src[0]), C.long(len(src)), C.float(s))
}

func (m *mpiTransport) barrier() error {
	return m.do(func() C.int { return C.wick_barrier(m.timeout) })
}

func (m *mpiTransport) finalize() error {
	return mpiError(m.onMain(func() C.int { return C.wick_finalize() }))
}

// abort calls MPI_Abort from the calling thread: MPI's main thread may be
// busy.
func (m *mpiTransport) abort(code int) {
	C.wick_abort(C.int(code))
	os.Exit(code)
}
