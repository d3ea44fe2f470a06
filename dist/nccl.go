//go:build cuda && mpi

package dist

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// NCCL is not linked and its header is not needed: its entry points are
// looked up with dlsym and called through these pointer types (nccl.h of
// NCCL 2: ncclResult_t, ncclDataType_t and ncclRedOp_t are enums, passed
// as int; ncclComm_t and cudaStream_t are opaque pointers; ncclUniqueId is
// a struct of 128 bytes, passed by value).
typedef struct { char internal[128]; } wick_ncclUniqueId;
typedef int (*wick_ncclGetVersion_t)(int *version);
typedef int (*wick_ncclGetUniqueId_t)(wick_ncclUniqueId *id);
typedef int (*wick_ncclCommInitRank_t)(void **comm, int nranks, wick_ncclUniqueId id, int rank);
typedef int (*wick_ncclAllReduce_t)(const void *send, void *recv, size_t count, int datatype, int op, void *comm, void *stream);
typedef int (*wick_ncclBroadcast_t)(const void *send, void *recv, size_t count, int datatype, int root, void *comm, void *stream);
typedef int (*wick_ncclCommDestroy_t)(void *comm);
typedef const char *(*wick_ncclGetErrorString_t)(int result);

static void *wick_nccl_dlopen(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static const char *wick_nccl_dlpath(void *lib) {
	struct link_map *m = 0;
	if (dlinfo(lib, RTLD_DI_LINKMAP, &m) != 0 || m == 0) return 0;
	return m->l_name;
}
static const char *wick_nccl_dlerror(void) { return dlerror(); }
static void *wick_nccl_dlsym(void *lib, const char *name) { return dlsym(lib, name); }

static int wick_nccl_version(void *fn, int *v) { return ((wick_ncclGetVersion_t)fn)(v); }
static int wick_nccl_unique_id(void *fn, char *out) {
	wick_ncclUniqueId id;
	memset(&id, 0, sizeof id);
	int rc = ((wick_ncclGetUniqueId_t)fn)(&id);
	memcpy(out, id.internal, sizeof id.internal);
	return rc;
}
static int wick_nccl_init_rank(void *fn, uintptr_t *comm, int nranks, const char *idBytes, int rank) {
	wick_ncclUniqueId id;
	memcpy(id.internal, idBytes, sizeof id.internal);
	void *c = 0;
	int rc = ((wick_ncclCommInitRank_t)fn)(&c, nranks, id, rank);
	*comm = (uintptr_t)c;
	return rc;
}
static int wick_nccl_all_reduce_sum_f32(void *fn, uintptr_t buf, size_t n, uintptr_t comm, uintptr_t stream) {
	return ((wick_ncclAllReduce_t)fn)((const void *)buf, (void *)buf, n, 7, 0, (void *)comm, (void *)stream); // ncclFloat32, ncclSum
}
static int wick_nccl_broadcast_f32(void *fn, uintptr_t buf, size_t n, int root, uintptr_t comm, uintptr_t stream) {
	return ((wick_ncclBroadcast_t)fn)((const void *)buf, (void *)buf, n, 7, root, (void *)comm, (void *)stream);
}
static int wick_nccl_destroy(void *fn, uintptr_t comm) { return ((wick_ncclCommDestroy_t)fn)((void *)comm); }
static const char *wick_nccl_error_string(void *fn, int rc) { return fn ? ((wick_ncclGetErrorString_t)fn)(rc) : 0; }
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/tensor"
)

func init() {
	openDeviceComm = func(c *Comm, dev tensor.Device) (deviceComm, error) {
		if _, ok := c.tr.(*mpiTransport); !ok {
			return nil, nil // one process, or a local group: through host memory
		}
		return bootstrapNCCL(c, func() (ncclLibrary, error) { return loadNCCL(dev) })
	}
}

// ncclLib is a loaded NCCL.
type ncclLib struct {
	dev                                     tensor.Device
	path, version                           string
	getVersion, getUniqueID, commInitRank   unsafe.Pointer
	allReduce, broadcast, destroy, errorStr unsafe.Pointer
}

var (
	ncclOnce   sync.Mutex
	ncclLoaded *ncclLib
	// ncclSearch returns the files and names loadNCCL tries, in order (a
	// test replaces it).
	ncclSearch = func() []string {
		home, _ := os.UserHomeDir()
		return ncclCandidates(os.Getenv, home, filepath.Glob)
	}
)

// loadNCCL opens NCCL (once per process) for collectives on dev.
func loadNCCL(dev tensor.Device) (ncclLibrary, error) {
	ncclOnce.Lock()
	defer ncclOnce.Unlock()
	if ncclLoaded != nil {
		l := *ncclLoaded
		l.dev = dev
		return &l, nil
	}
	var lib unsafe.Pointer
	var tried []string
	name := ""
	for _, cand := range ncclSearch() {
		cname := C.CString(cand)
		lib = C.wick_nccl_dlopen(cname)
		C.free(unsafe.Pointer(cname))
		if lib != nil {
			name = cand
			break
		}
		tried = append(tried, fmt.Sprintf("%s (%s)", cand, C.GoString(C.wick_nccl_dlerror())))
	}
	if lib == nil {
		return nil, ncclMissing(tried)
	}
	l := &ncclLib{dev: dev, path: name}
	if p := C.wick_nccl_dlpath(lib); p != nil && C.GoString(p) != "" {
		l.path = C.GoString(p)
	}
	for _, e := range []struct {
		name string
		fn   *unsafe.Pointer
	}{
		{"ncclGetVersion", &l.getVersion},
		{"ncclGetUniqueId", &l.getUniqueID},
		{"ncclCommInitRank", &l.commInitRank},
		{"ncclAllReduce", &l.allReduce},
		{"ncclBroadcast", &l.broadcast},
		{"ncclCommDestroy", &l.destroy},
		{"ncclGetErrorString", &l.errorStr},
	} {
		cname := C.CString(e.name)
		*e.fn = C.wick_nccl_dlsym(lib, cname)
		C.free(unsafe.Pointer(cname))
		if *e.fn == nil {
			return nil, fmt.Errorf("dist: NCCL (%s) has no symbol %s: is it NCCL 2?", l.path, e.name)
		}
	}
	var v C.int
	if rc := C.wick_nccl_version(l.getVersion, &v); rc != 0 {
		return nil, fmt.Errorf("dist: ncclGetVersion (%s): %w", l.path, l.error(rc))
	}
	l.version = ncclVersion(int(v))
	ncclLoaded = l
	c := *l
	return &c, nil
}

// ncclVersion turns NCCL_VERSION_CODE into "2.21.5" (the code is
// 10000·major + 100·minor + patch from 2.9 on, 1000·major + 100·minor +
// patch before).
func ncclVersion(v int) string {
	if v >= 20900 {
		return fmt.Sprintf("%d.%d.%d", v/10000, v%10000/100, v%100)
	}
	return fmt.Sprintf("%d.%d.%d", v/1000, v%1000/100, v%100)
}

func (l *ncclLib) error(rc C.int) error {
	if s := C.wick_nccl_error_string(l.errorStr, rc); s != nil {
		return fmt.Errorf("ncclResult %d: %s", int(rc), C.GoString(s))
	}
	return fmt.Errorf("ncclResult %d", int(rc))
}

func (l *ncclLib) uniqueID() ([ncclIDLen]byte, error) {
	var id [ncclIDLen]byte
	if rc := C.wick_nccl_unique_id(l.getUniqueID, (*C.char)(unsafe.Pointer(&id[0]))); rc != 0 {
		return id, fmt.Errorf("ncclGetUniqueId (%s): %w", l.path, l.error(rc))
	}
	return id, nil
}

func (l *ncclLib) initRank(nranks int, id [ncclIDLen]byte, rank int) (deviceComm, error) {
	nc := &ncclComm{lib: l}
	err := cuda.WithDevice(l.dev.Index, func() error {
		if rc := C.wick_nccl_init_rank(l.commInitRank, &nc.comm, C.int(nranks), (*C.char)(unsafe.Pointer(&id[0])), C.int(rank)); rc != 0 {
			return fmt.Errorf("ncclCommInitRank(%d ranks, rank %d) on %s (%s): %w", nranks, rank, l.dev, l.path, l.error(rc))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if nc.stream, err = cuda.Stream(l.dev.Index); err != nil {
		_ = nc.destroy()
		return nil, err
	}
	return nc, nil
}

// ncclComm is NCCL's communicator on this rank's GPU.
type ncclComm struct {
	lib    *ncclLib
	comm   C.uintptr_t
	stream uintptr // the GPU's compute stream
}

func (nc *ncclComm) device() tensor.Device { return nc.lib.dev }

func (nc *ncclComm) describe() string {
	return fmt.Sprintf("nccl %s (%s)", nc.lib.version, nc.lib.path)
}

// run calls f with t's device address and element count, with the GPU's
// context current; nothing for an empty tensor.
func (nc *ncclComm) run(op string, t *tensor.Tensor, f func(ptr C.uintptr_t, n C.size_t) C.int) error {
	if t.Numel() == 0 {
		return nil
	}
	ptr, dev, err := cuda.DevicePointer(t)
	if err != nil {
		return err
	}
	if dev != nc.lib.dev.Index {
		return fmt.Errorf("%s of a tensor on cuda:%d with NCCL's communicator on %s", op, dev, nc.lib.dev)
	}
	err = cuda.WithDevice(dev, func() error {
		if rc := f(C.uintptr_t(ptr), C.size_t(t.Numel())); rc != 0 {
			return fmt.Errorf("%s of %d floats on %s: %w", op, t.Numel(), nc.lib.dev, nc.lib.error(rc))
		}
		return nil
	})
	runtime.KeepAlive(t) // queued on the stream: the allocator reuses the block only after it
	return err
}

func (nc *ncclComm) allReduceSum(t *tensor.Tensor) error {
	return nc.run("ncclAllReduce", t, func(ptr C.uintptr_t, n C.size_t) C.int {
		return C.wick_nccl_all_reduce_sum_f32(nc.lib.allReduce, ptr, n, nc.comm, C.uintptr_t(nc.stream))
	})
}

func (nc *ncclComm) broadcast(t *tensor.Tensor, root int) error {
	return nc.run("ncclBroadcast", t, func(ptr C.uintptr_t, n C.size_t) C.int {
		return C.wick_nccl_broadcast_f32(nc.lib.broadcast, ptr, n, C.int(root), nc.comm, C.uintptr_t(nc.stream))
	})
}

func (nc *ncclComm) destroy() error {
	if nc.comm == 0 {
		return nil
	}
	var err error
	if e := cuda.WithDevice(nc.lib.dev.Index, func() error {
		if rc := C.wick_nccl_destroy(nc.lib.destroy, nc.comm); rc != 0 {
			err = fmt.Errorf("ncclCommDestroy: %w", nc.lib.error(rc))
		}
		return nil
	}); e != nil {
		return e
	}
	nc.comm = 0
	return err
}
