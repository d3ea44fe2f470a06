package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// The caching allocator. (Plain Go without the cuda tag: the device calls
// go through devMem, so that its tests run without a GPU.)
//
// Device memory comes from the driver in blocks whose sizes are rounded up
// to a few size classes (bucket). A block whose storage is released goes
// onto the free list of its class and is handed out again for the next
// request of that class without asking the driver, so a training loop that
// allocates the same shapes every step stops calling cuMemAlloc after its
// first steps. All kernels run on one stream, in order, so a block may be
// reused as soon as it is released: any kernel still reading it was queued
// before the kernel that will overwrite it.
//
// Storages are released explicitly (Tensor.Release) or when the garbage
// collector finds them unreachable (runtime.AddCleanup). The collector does
// not see device memory, so it may run rarely while the device fills up
// with the storages of dropped tensors. The allocator therefore forces a
// collection itself when a request misses the cache and enough memory was
// handed out since the last forced collection that much of it may be
// garbage by now (gcTrigger), and again before giving up with
// out-of-memory. After a forced collection it reclaims at once every block
// whose storage is unreachable (it holds weak pointers to the live
// storages), without waiting for the cleanup functions to run. In a loop
// that allocates the same sizes every step, the reserved memory so settles
// at the working set plus about one trigger's worth, and stays there.

// devMem is the device memory the allocator manages.
type devMem interface {
	// alloc returns size bytes of device memory; errOutOfMemory when the
	// device has no room.
	alloc(size int64) (uintptr, error)
	free(ptr uintptr) error
	// sync waits until no queued kernel can still use freed memory.
	sync() error
}

var errOutOfMemory = errors.New("out of memory")

// gcTrigger is how many bytes must have been handed out since the last
// forced collection before a cache miss forces another: at least
// minGCTrigger, a quarter of the reserved memory for large working sets
// (a forced collection costs a fraction of a millisecond to a few).
//
// The reserved memory grows only at a cache miss before the trigger, so it
// stops growing once the cache holds about one trigger's worth beyond the
// working set. The Go collector's own cycles follow the host heap, not the
// device's, and can leave hundreds of megabytes of dead storages between
// them: with a 256 MiB floor, a small MLP's loop was still creeping up at
// 250 MiB after 1000 steps; with 32 MiB it holds 36 MiB flat from step 100
// (TestMemoryFlat on the emulated device, scripts/cuda_emu.sh).
func gcTrigger(reserved int64) int64 { return max(minGCTrigger, reserved/4) }

const minGCTrigger = 32 << 20

// block is one allocation from the driver.
type block struct {
	ptr  uintptr
	size int64 // its size class
}

// lease is one storage's use of a block; a block reused by a new storage
// gets a new lease, so a late cleanup of the old storage cannot free it.
type lease struct {
	blk  *block
	done atomic.Bool
}

type allocator struct {
	mem devMem

	mu      sync.Mutex
	free    map[int64][]*block
	live    map[*lease]func() bool // reports whether the lease's storage is reachable
	stats   MemoryStats
	sinceGC int64 // bytes handed out since the last forced collection
}

func newAllocator(mem devMem) *allocator {
	return &allocator{mem: mem, free: map[int64][]*block{}, live: map[*lease]func() bool{}}
}

// take pops a cached block of class size, or returns nil.
func (a *allocator) take(size int64) *block {
	a.mu.Lock()
	defer a.mu.Unlock()
	list := a.free[size]
	if len(list) == 0 {
		return nil
	}
	b := list[len(list)-1]
	a.free[size] = list[:len(list)-1]
	a.noteAlloc(size)
	return b
}

func (a *allocator) noteAlloc(size int64) {
	a.sinceGC += size
	a.stats.Allocated += size
	a.stats.Peak = max(a.stats.Peak, a.stats.Allocated)
}

// block returns a block of at least n bytes (n > 0), from the cache if it
// can. On a device, the caller holds the device context.
func (a *allocator) block(n int64) (*block, error) {
	size := bucket(n)
	if b := a.take(size); b != nil {
		return b, nil
	}
	a.mu.Lock()
	pressure := a.sinceGC >= gcTrigger(a.stats.Reserved)
	a.mu.Unlock()
	if pressure {
		a.collect()
		if b := a.take(size); b != nil {
			return b, nil
		}
	}
	ptr, err := a.mem.alloc(size)
	if errors.Is(err, errOutOfMemory) {
		a.collect()
		if b := a.take(size); b != nil {
			return b, nil
		}
		if err := a.emptyCache(); err != nil {
			return nil, err
		}
		ptr, err = a.mem.alloc(size)
	}
	if err != nil {
		s := a.Stats()
		return nil, fmt.Errorf("allocating %d bytes (allocated %d, reserved %d): %w", size, s.Allocated, s.Reserved, err)
	}
	a.mu.Lock()
	a.stats.Reserved += size
	a.noteAlloc(size)
	a.mu.Unlock()
	return &block{ptr: ptr, size: size}, nil
}

// put returns a block to the cache.
func (a *allocator) put(b *block) {
	a.mu.Lock()
	a.putLocked(b)
	a.mu.Unlock()
}

func (a *allocator) putLocked(b *block) {
	a.stats.Allocated -= b.size
	a.free[b.size] = append(a.free[b.size], b)
}

// track registers a lease whose storage is reachable while alive reports
// true (alive must not keep the storage reachable: use a weak pointer).
func (a *allocator) track(l *lease, alive func() bool) {
	a.mu.Lock()
	a.live[l] = alive
	a.mu.Unlock()
}

// release ends a lease and caches its block; later calls do nothing.
func (a *allocator) release(l *lease) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !l.done.CompareAndSwap(false, true) {
		return
	}
	delete(a.live, l)
	a.putLocked(l.blk)
}

// collect runs the garbage collector and reclaims the blocks of every
// storage it found unreachable.
func (a *allocator) collect() {
	runtime.GC()
	a.mu.Lock()
	defer a.mu.Unlock()
	for l, alive := range a.live {
		if !alive() && l.done.CompareAndSwap(false, true) {
			delete(a.live, l)
			a.putLocked(l.blk)
		}
	}
	a.sinceGC = 0
}

// emptyCache returns every cached block to the driver. On a device, the
// caller holds the device context.
func (a *allocator) emptyCache() error {
	if err := a.mem.sync(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var first error
	for size, list := range a.free {
		for _, b := range list {
			if err := a.mem.free(b.ptr); err != nil && first == nil {
				first = err
			}
			a.stats.Reserved -= b.size
		}
		delete(a.free, size)
	}
	return first
}

// Stats returns the allocator's counters.
func (a *allocator) Stats() MemoryStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}

func (a *allocator) resetPeak() {
	a.mu.Lock()
	a.stats.Peak = a.stats.Allocated
	a.mu.Unlock()
}
