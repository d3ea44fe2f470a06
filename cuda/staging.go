//go:build cuda

package cuda

/*
#include <cuda.h>
#include "cuinit.h"

// cuMemAllocHost (gorgonia.org/cu wraps only its free).
static CUresult wick_mem_alloc_host(void **p, size_t bytes) { return cuMemAllocHost(p, bytes); }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"gorgonia.org/cu"
)

// stagingBytes is the size of each of a device's two pinned staging
// buffers for host-to-device copies.
const stagingBytes = 4 << 20

// staging stages host-to-device copies through pinned (page-locked) host
// memory. cuMemcpyHtoDAsync from pageable memory (a Go slice) may return
// before it has read the source (the CUDA documentation promises only that
// it "might be synchronous"), and Go memory must not be read by the driver
// after the call that passed it: the garbage collector may reclaim it. So
// the bytes are first copied into one of two pinned buffers, the
// asynchronous copy reads them from there, and an event recorded after it
// tells when that buffer may be filled again; with two buffers, filling
// one overlaps the device's copy out of the other.
type staging struct {
	mu   sync.Mutex
	buf  [2]unsafe.Pointer // stagingBytes of pinned host memory each, allocated on first use
	done [2]cu.Event       // recorded after the last copy out of buf[i]
	used [2]bool           // whether done[i] has been recorded
	next int
}

// copy queues a copy of bytes bytes at src (Go memory) to dst on stream
// and returns once src has been read in full. The caller holds the
// device's context on this thread (device.enter).
func (s *staging) copy(stream cu.Stream, dst cu.DevicePtr, src unsafe.Pointer, bytes int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for off := int64(0); off < bytes; {
		n := min(bytes-off, stagingBytes)
		i := s.next
		s.next = 1 - s.next
		if s.buf[i] == nil {
			var p unsafe.Pointer
			if r := C.wick_mem_alloc_host(&p, C.size_t(stagingBytes)); r != C.CUDA_SUCCESS {
				return cuError("cuMemAllocHost", int(r))
			}
			ev, err := cu.MakeEvent(cu.DisableTiming)
			if err != nil {
				C.cuMemFreeHost(p)
				return err
			}
			s.buf[i], s.done[i] = p, ev
		}
		if s.used[i] {
			// the copy out of this buffer two pieces ago must be done
			if err := s.done[i].Synchronize(); err != nil {
				return err
			}
		}
		copy(unsafe.Slice((*byte)(s.buf[i]), n), unsafe.Slice((*byte)(unsafe.Add(src, off)), n))
		if err := cu.MemcpyHtoDAsync(dst+cu.DevicePtr(off), s.buf[i], n, stream); err != nil {
			return err
		}
		if err := s.done[i].Record(stream); err != nil {
			return err
		}
		s.used[i] = true
		off += n
	}
	return nil
}

// cuError names a CUresult of a driver call made without gorgonia.org/cu.
func cuError(call string, code int) error {
	name := fmt.Sprintf("CUresult %d", code)
	if n := C.wick_cu_error_name(C.int(code)); n != nil {
		name = C.GoString(n)
	}
	return fmt.Errorf("%s: %s", call, name)
}
