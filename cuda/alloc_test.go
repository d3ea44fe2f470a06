package cuda

import (
	"runtime"
	"runtime/debug"
	"testing"
	"weak"
)

// The allocator's policy is tested here against fake device memory, with
// the real garbage collector, so it runs without a GPU.

// fakeMem is device memory with a capacity, counting driver calls.
type fakeMem struct {
	capacity, used int64
	next           uintptr
	sizes          map[uintptr]int64
	allocs, frees  int
}

func newFakeMem(capacity int64) *fakeMem {
	return &fakeMem{capacity: capacity, next: 1 << 20, sizes: map[uintptr]int64{}}
}

func (m *fakeMem) alloc(size int64) (uintptr, error) {
	if m.used+size > m.capacity {
		return 0, errOutOfMemory
	}
	m.used += size
	p := m.next
	m.next += uintptr(size)
	m.sizes[p] = size
	m.allocs++
	return p, nil
}

func (m *fakeMem) free(p uintptr) error {
	m.used -= m.sizes[p]
	delete(m.sizes, p)
	m.frees++
	return nil
}

func (m *fakeMem) sync() error { return nil }

// fakeStorage stands for a tensor storage: registered like newStorage
// registers one.
type fakeStorage struct {
	l *lease
}

func newFake(t testing.TB, a *allocator, n int64) *fakeStorage {
	t.Helper()
	blk, err := a.block(n)
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeStorage{l: &lease{blk: blk}}
	w := weak.Make(s)
	a.track(s.l, func() bool { return w.Value() != nil })
	runtime.AddCleanup(s, a.release, s.l)
	return s
}

func TestAllocatorReuse(t *testing.T) {
	mem := newFakeMem(1 << 30)
	a := newAllocator(mem)
	s := newFake(t, a, 1000)
	p := s.l.blk.ptr
	if st := a.Stats(); st.Allocated != 1024 || st.Reserved != 1024 || st.Peak != 1024 {
		t.Errorf("after one allocation of 1000 bytes: %+v, want 1024 allocated, reserved and peak", st)
	}
	a.release(s.l)
	a.release(s.l) // twice is harmless
	if st := a.Stats(); st.Allocated != 0 || st.Reserved != 1024 {
		t.Errorf("after Release: %+v, want 0 allocated, 1024 reserved", st)
	}
	s2 := newFake(t, a, 900) // same size class
	if s2.l.blk.ptr != p || mem.allocs != 1 {
		t.Errorf("a request of the same class should reuse the cached block (driver allocations: %d)", mem.allocs)
	}
	runtime.KeepAlive(s2)
	if err := a.emptyCache(); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Reserved != 1024 || mem.frees != 0 {
		t.Errorf("EmptyCache must not free a block in use: %+v, %d frees", st, mem.frees)
	}
	a.release(s2.l)
	a.emptyCache()
	if st := a.Stats(); st.Reserved != 0 || mem.used != 0 {
		t.Errorf("EmptyCache after Release: %+v, driver still holds %d bytes", st, mem.used)
	}
}

// TestAllocatorFlat imitates a training loop: persistent parameters, and
// every step a fixed mix of temporaries that are dropped without Release.
// With the collector's own schedule switched off, only the allocator's
// forced collections reclaim them; reserved memory must stop growing after
// warm-up and stay near the working set.
func TestAllocatorFlat(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	mem := newFakeMem(1 << 40)
	a := newAllocator(mem)
	var params []*fakeStorage
	for _, n := range []int64{4 << 20, 1 << 20, 4096, 4096} {
		params = append(params, newFake(t, a, n))
	}
	sizes := []int64{3 << 20, 3 << 20, 700 << 10, 5000, 5000, 123, 2 << 20, 4 << 20, 64 << 10}
	var perStep int64
	for _, n := range sizes {
		perStep += bucket(n)
	}
	var reserved []int64
	allocsAt200 := 0
	for step := range 400 {
		var keep []*fakeStorage // the step's activations, alive until the step ends
		for _, n := range sizes {
			keep = append(keep, newFake(t, a, n))
		}
		runtime.KeepAlive(keep)
		if step%50 == 49 {
			reserved = append(reserved, a.Stats().Reserved)
		}
		if step == 199 {
			allocsAt200 = mem.allocs
		}
	}
	runtime.KeepAlive(params)
	t.Logf("reserved every 50 steps: %v; %d bytes per step; %d driver allocations", reserved, perStep, mem.allocs)
	for i, r := range reserved[4:] {
		if r != reserved[3] {
			t.Errorf("reserved memory changed after warm-up: %d at step %d, %d at step 200", r, (i+5)*50, reserved[3])
		}
	}
	if mem.allocs != allocsAt200 {
		t.Errorf("the driver was asked for memory after warm-up: %d allocations at step 200, %d at the end", allocsAt200, mem.allocs)
	}
	if limit := 9<<20 + perStep + gcTrigger(reserved[7]) + perStep; reserved[7] > limit {
		t.Errorf("reserved %d bytes, want at most working set + a trigger = %d", reserved[7], limit)
	}
}

// TestAllocatorOutOfMemory checks the two rescues before out-of-memory:
// reclaiming unreachable storages, then returning cached blocks of other
// sizes to the driver.
func TestAllocatorOutOfMemory(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	mem := newFakeMem(64 << 20)
	a := newAllocator(mem)
	for range 100 { // 100 × 10 MiB through 64 MiB: needs reclaiming
		newFake(t, a, 10<<20)
	}
	small := newFake(t, a, 30<<20)
	a.release(small.l) // cached, of another class
	big := newFake(t, a, 60<<20)
	if st := a.Stats(); st.Reserved > 64<<20 || st.Allocated != bucket(60<<20) {
		t.Errorf("after the rescues: %+v", st)
	}
	if _, err := a.block(10 << 20); err == nil {
		t.Error("a request beyond the capacity should fail")
	}
	runtime.KeepAlive(big)
}
