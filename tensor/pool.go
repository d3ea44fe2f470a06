package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/wickml/wick/autograd"
)

// The CPU free list.
//
// Training allocates the same few dozen buffer sizes on every step. The
// float32 buffers of CPU storages, and the bfloat16 and float16 ones (an
// autocast step's rounded operands and gradients), are therefore recycled:
// a buffer goes back to a free list, keyed by its element type and exact
// length, when its storage is provably unused, and the next allocation of
// that type and length takes it from there instead of from the
// garbage-collected heap.
//
// Provably unused means that the code handing the buffer back knows that no
// tensor can read or write the storage any more. Three places know it:
//
//   - Tensor.Release: its contract makes every tensor viewing the storage
//     unusable, and it must not run while another goroutine uses one.
//   - A backward pass (runBackward): the buffers that the pass allocates
//     on its goroutine (gradients flowing through the graph and the
//     temporaries of the derivative formulas) are reachable only from the
//     graph's closures and pending gradients, except those that escape: a
//     leaf's or a retained gradient, SetGrad's argument, and what is handed
//     to the user code of a Function's Backward. escape marks those; the
//     rest are recycled as soon as the node that consumes them has run
//     (tracker.sweep), and whatever is left when the pass ends.
//   - Scope: the storages allocated by Scope's function, other than its
//     result's, are its private temporaries; those still alive (saved for
//     the backward pass) are recycled when the backward pass through the
//     result releases the graph (or at once when nothing was recorded).
//     The Scope holds them weakly, so that the temporaries nothing saved
//     are the collector's as soon as the forward pass drops them.
//
// A recycled storage is marked released like one of Tensor.Release, so that
// a tensor that escaped unnoticed panics on use (live) instead of reading
// another tensor's data. Storages merely become unreachable are left to
// the garbage collector: a free list fed by the collector (runtime
// cleanups) was measured slower, since the buffers it holds count as live
// and postpone the collections that would find the rest; a buffer that a
// cleanup receives also survives the collection that found its storage
// unreachable, so each collection leaves all the buffers dropped since
// the previous one live, and the heap kept growing (docs/perf.md).
//
// HostFloat32s gives the caller the buffer itself, which can outlive the
// storage, so it pins the storage: its buffer is never recycled.
//
// Buffers taken from the free list are cleared when the contract says
// zero-filled (Backend.Alloc) and left as they are for outputs the kernel
// overwrites in full (AllocUninit), exactly as fresh memory would be. The
// list is safe for concurrent use.

// poolMinElems is the smallest buffer that is recycled: below it, the
// allocator is as fast as the free list.
const poolMinElems = 1024

// poolMaxBytes bounds the bytes held by the free list; buffers that would
// exceed it are left to the collector.
var poolMaxBytes atomic.Int64

func init() { poolMaxBytes.Store(256 << 20) }

// f32Pool is the free list of float32 buffers (free) and of 16-bit ones
// (free16, BFloat16 and Float16 alike: bit patterns), by exact length; each
// list is a stack, its most recently freed buffer (the likeliest to be in
// the caches) on top. Each entry remembers the collector cycle (tick) in
// which it was freed. bytes counts both kinds against poolMaxBytes.
var f32Pool = struct {
	mu     sync.Mutex
	free   map[int][]pooledBuf[float32]
	free16 map[int][]pooledBuf[uint16]
	bytes  int64
	tick   uint64
}{free: map[int][]pooledBuf[float32]{}, free16: map[int][]pooledBuf[uint16]{}}

type pooledBuf[T float32 | uint16] struct {
	b    []T
	tick uint64
}

// poolStats counts the free list's traffic, for tests.
var poolStats struct {
	hits, puts, trimmed atomic.Int64
	hits16              atomic.Int64 // of hits, the 16-bit buffers'
}

// getF32 returns a recycled buffer of n elements with unspecified contents,
// or nil if the free list has none.
func getF32(n int) []float32 { return getBuf(f32Pool.free, n) }

// getH16 is getF32 for a 16-bit buffer.
func getH16(n int) []uint16 {
	b := getBuf(f32Pool.free16, n)
	if b != nil {
		poolStats.hits16.Add(1)
	}
	return b
}

// getBuf takes a buffer of n elements from the list free (of f32Pool), or
// returns nil.
func getBuf[T float32 | uint16](free map[int][]pooledBuf[T], n int) []T {
	p := &f32Pool
	p.mu.Lock()
	l := free[n]
	if len(l) == 0 {
		p.mu.Unlock()
		return nil
	}
	b := l[len(l)-1].b
	l[len(l)-1] = pooledBuf[T]{}
	free[n] = l[:len(l)-1]
	p.bytes -= int64(n) * elemBytes[T]()
	p.mu.Unlock()
	poolStats.hits.Add(1)
	return b
}

// elemBytes is the size of a T.
func elemBytes[T float32 | uint16]() int64 {
	var z T
	return int64(unsafe.Sizeof(z))
}

// putF32 hands b to the free list. The caller guarantees that nothing reads
// or writes b any more.
func putF32(b []float32) { putBuf(f32Pool.free, b) }

// putH16 is putF32 for a 16-bit buffer.
func putH16(b []uint16) { putBuf(f32Pool.free16, b) }

// putBuf hands b to the list free (of f32Pool).
func putBuf[T float32 | uint16](free map[int][]pooledBuf[T], b []T) {
	n := len(b)
	if n < poolMinElems || cap(b) != n {
		return
	}
	size := int64(n) * elemBytes[T]()
	p := &f32Pool
	p.mu.Lock()
	if p.bytes+size > poolMaxBytes.Load() {
		p.mu.Unlock()
		return
	}
	free[n] = append(free[n], pooledBuf[T]{b: b, tick: p.tick})
	p.bytes += size
	p.mu.Unlock()
	poolStats.puts.Add(1)
}

// trimPool starts a new tick and drops the buffers that have waited in the
// free list since before the previous one: memory that a program stopped
// needing goes back to the garbage collector within two of its cycles (the
// runtime starts one at least every two minutes), while a loop that frees
// and takes buffers between cycles keeps them.
func trimPool() {
	p := &f32Pool
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tick++
	trimBufs(p.free)
	trimBufs(p.free16)
}

// trimBufs is trimPool's work on one of f32Pool's lists, under its lock.
func trimBufs[T float32 | uint16](free map[int][]pooledBuf[T]) {
	p := &f32Pool
	for n, l := range free {
		// oldest at the bottom of each stack
		k := 0
		for k < len(l) && l[k].tick+1 < p.tick {
			k++
		}
		if k == 0 {
			continue
		}
		p.bytes -= int64(k) * int64(n) * elemBytes[T]()
		poolStats.trimmed.Add(int64(k))
		if k == len(l) {
			delete(free, n)
			continue
		}
		free[n] = append(l[:0:0], l[k:]...)
	}
}

// gcTick is garbage that the collector finds at each cycle; its cleanup
// trims the free list and makes the next one.
type gcTick struct{ _ [32]byte } // not a tiny allocation, which could share its block

func armPoolTrim() {
	runtime.AddCleanup(new(gcTick), func(struct{}) {
		if !trimPaused.Load() {
			trimPool()
		}
		armPoolTrim()
	}, struct{}{})
}

// trimPaused stops the collector's ticks from trimming (tests).
var trimPaused atomic.Bool

func init() { armPoolTrim() }

// drainPool empties the free list (tests).
func drainPool() {
	p := &f32Pool
	p.mu.Lock()
	clear(p.free)
	clear(p.free16)
	p.bytes = 0
	p.mu.Unlock()
}

// pooledF32 returns a storage of n float32 elements whose buffer may come
// from the free list and may return to it. zero asks for a zero-filled
// buffer; otherwise the contents are unspecified (as for makeUninitF32).
// The storage is noted in the goroutine's tracker, if any.
func pooledF32(n int, zero bool) *cpuStorage {
	if n < poolMinElems {
		if zero {
			return &cpuStorage{dt: Float32, f: make([]float32, n)}
		}
		return &cpuStorage{dt: Float32, f: makeUninitF32(n)}
	}
	b := getF32(n)
	switch {
	case b == nil && zero:
		b = make([]float32, n)
	case b == nil:
		b = makeUninitF32(n)
	case zero:
		clear(b)
	case poisonUninit:
		for i := range b {
			b[i] = poison
		}
	}
	s := &cpuStorage{dt: Float32, f: b, pooled: true}
	if t, ok := autograd.CurrentScope().(*tracker); ok {
		t.note(s)
		s.owner = t
	}
	return s
}

// pooledH16 is pooledF32 for a BFloat16 or Float16 storage (dt) of n
// elements; a buffer with unspecified contents holds poison16 where the
// package's tests ask for poison.
func pooledH16(dt DType, n int, zero bool) *cpuStorage {
	if n < poolMinElems {
		return &cpuStorage{dt: dt, h: make([]uint16, n)}
	}
	b := getH16(n)
	switch {
	case b == nil && zero:
		b = make([]uint16, n)
	case b == nil:
		b = makeUninit16(n)
	case zero:
		clear(b)
	case poisonUninit:
		for i := range b {
			b[i] = poison16
		}
	}
	s := &cpuStorage{dt: dt, h: b, pooled: true}
	if t, ok := autograd.CurrentScope().(*tracker); ok {
		t.note(s)
		s.owner = t
	}
	return s
}

// release drops s's buffer (Release): a pooled, unpinned buffer goes to
// the free list at once.
func (s *cpuStorage) release() {
	if s.gone != nil {
		return
	}
	f, h := s.f, s.h
	s.gone = &releasedStorage{n: s.Len()}
	s.f, s.i, s.h = nil, nil, nil
	// handed over once even if Release races with itself (a misuse)
	if s.pooled && !s.pinned.Load() && !s.handed.Swap(true) {
		if h != nil {
			putH16(h)
		} else {
			putF32(f)
		}
	}
}

// pin keeps s's buffer out of the free list for good, because a slice of
// it is leaving package tensor (HostFloat32s).
func (s *cpuStorage) pin() { s.pinned.Store(true) }

// tracker lists the pooled storages allocated on one goroutine while it
// runs a backward pass (runBackward) or a Scope (autograd.WithScope makes
// it the goroutine's current tracker).
//
// A backward pass's tracker (backward set) also reuses memory while the
// pass runs: when a node's closure returns, the gradient it consumed and
// the temporaries it allocated are dead unless a non-leaf's pending
// gradient views them (gradRefs, counted by accumulate) or they escaped,
// and sweep recycles them at once, so that the next nodes reuse buffers
// that are still in the caches and the pass needs little more memory than
// its live gradients.
//
// A Scope's tracker holds its storages weakly (scoped): the temporaries
// that the recorded graph saved for the backward pass are alive when the
// graph is released and go to the free list then, while those that nothing
// saved (the input of an Add, a view's, a rotation's) are the collector's
// as soon as the forward pass drops them, instead of staying live until
// the backward pass ends.
type tracker struct {
	stores   []*cpuStorage
	scoped   []weak.Pointer[cpuStorage] // a Scope's storages
	backward bool
	dropped  []*cpuStorage // pending gradients replaced by a sum (accumulate)
}

// note adds s to the storages t tracks.
func (t *tracker) note(s *cpuStorage) {
	if t.backward {
		t.stores = append(t.stores, s)
		return
	}
	t.scoped = append(t.scoped, weak.Make(s))
}

// currentArena returns the tracker of the backward pass running on the
// calling goroutine, or nil.
func currentArena() *tracker {
	if a, ok := autograd.CurrentScope().(*tracker); ok && a.backward {
		return a
	}
	return nil
}

// owned returns t's storage if a allocated it, else nil.
func (a *tracker) owned(t *Tensor) *cpuStorage {
	if a == nil || t == nil {
		return nil
	}
	if s, ok := t.storage.(*cpuStorage); ok && s.owner == a {
		return s
	}
	return nil
}

// ownsWhole reports whether g is a temporary of a's backward pass that a
// leaf may take as its gradient without a copy: a allocated its storage,
// no pending gradient views it, no leaf took it already, and g is the
// whole storage in order.
func (a *tracker) ownsWhole(g *Tensor) bool {
	s := a.owned(g)
	return s != nil && s.gradRefs == 0 && s.gone == nil && !s.escaped.Load() && !s.pinned.Load() &&
		g.layout.Offset == 0 && g.IsContiguous() && g.Numel() == s.Len()
}

// ref and unref count t as a pending gradient (gradBuf) or no longer one.
func (a *tracker) ref(t *Tensor) {
	if s := a.owned(t); s != nil {
		s.gradRefs++
	}
}

func (a *tracker) unref(t *Tensor) {
	if s := a.owned(t); s != nil {
		s.gradRefs--
	}
}

// drop notes a pending gradient that was replaced, for the next sweep.
func (a *tracker) drop(t *Tensor) {
	if s := a.owned(t); s != nil {
		a.dropped = append(a.dropped, s)
	}
}

// sweep recycles, after a node's closure, the storages it allocated
// (a.stores[mark:]), the gradient g it consumed and the gradients replaced
// meanwhile, where no pending gradient views them and they did not escape.
func (a *tracker) sweep(mark int, g *Tensor) {
	dead := func(s *cpuStorage) {
		if s.gradRefs == 0 && s.gone == nil && !s.escaped.Load() && !s.pinned.Load() {
			s.recycled = true
			s.release()
		}
	}
	for _, s := range a.stores[mark:] {
		dead(s)
	}
	if s := a.owned(g); s != nil {
		dead(s)
	}
	for i, s := range a.dropped {
		dead(s)
		a.dropped[i] = nil
	}
	a.dropped = a.dropped[:0]
}

// escape marks the storage of t as reachable by the caller, so that the
// backward pass or Scope that allocated it does not recycle it.
func escape(t *Tensor) {
	if t == nil {
		return
	}
	if s, ok := t.storage.(*cpuStorage); ok && s.pooled {
		s.escaped.Store(true)
	}
}

// recycle hands the buffers of stores that did not escape to the free
// list, marking them released.
func recycle(stores []*cpuStorage) {
	for _, s := range stores {
		if s.escaped.Load() || s.pinned.Load() || s.gone != nil {
			continue
		}
		s.recycled = true
		s.release()
	}
}

// untracked runs f with no tracker on the calling goroutine, for user code
// (a Function's Forward and Backward), which may keep what it allocates.
func untracked(f func()) {
	if autograd.CurrentScope() == nil {
		f()
		return
	}
	autograd.WithScope(nil, f)
}

// runBackward runs the backward pass from root on the calling goroutine,
// then recycles what the pass allocated and did not let escape. If the pass
// panics, nothing is recycled.
func runBackward(root *autograd.Node) {
	a := &tracker{backward: true}
	autograd.WithScope(a, func() { autograd.Run(root) })
	recycle(a.stores)
	// what escaped belongs to the caller now, not to an enclosing Scope
}

// Scope runs f and returns its result, treating every other tensor that f
// creates as f's private temporary: the CPU memory of those tensors is
// reused for later tensors once nothing can use it any more. That is at
// once when f's result was not recorded for autograd, and otherwise when
// the backward pass through the result releases the recorded graph (the
// temporaries saved for the backward pass are needed until then). This is
// what keeps a training loop from allocating its activations afresh on
// every step; nn's modules run their forward passes in a Scope.
//
// f must not let any tensor it creates, other than its result and views of
// the result, outlive the call: not in a variable, a field, a channel or a
// closure of its caller's, nor through code it calls that might keep one
// (user callbacks). Gradients stored with SetGrad are the exception: they
// belong to their tensor. A tensor that breaks this rule panics with an *Error
// when used after its memory was reused. Tensors that f receives and
// tensors allocated on other goroutines are not f's. A panic in f leaves
// every tensor to the garbage collector.
func Scope(f func() *Tensor) *Tensor {
	sc := &tracker{}
	var out *Tensor
	autograd.WithScope(sc, func() { out = f() })
	var keep *cpuStorage
	if out != nil {
		keep, _ = out.storage.(*cpuStorage)
	}
	rest := sc.scoped[:0]
	var kept []weak.Pointer[cpuStorage]
	for _, w := range sc.scoped {
		switch s := w.Value(); {
		case s == nil: // collected already
		case s == keep:
			kept = append(kept, w)
		default:
			rest = append(rest, w)
		}
	}
	if parent, ok := autograd.CurrentScope().(*tracker); ok {
		for _, w := range kept {
			if s := w.Value(); s != nil {
				parent.note(s)
			}
		}
	}
	if len(rest) == 0 {
		return out
	}
	if out != nil && out.node != nil && !out.node.IsLeaf() && !out.node.Released() {
		out.node.OnRelease(func() { recycleWeak(rest) })
		return out
	}
	// nothing that f recorded can run: no node of it is reachable from
	// out (which has none of f's, or none) nor from anything else
	recycleWeak(rest)
	return out
}

// recycleWeak is recycle of the storages of ws still alive.
func recycleWeak(ws []weak.Pointer[cpuStorage]) {
	for _, w := range ws {
		if s := w.Value(); s != nil {
			recycle([]*cpuStorage{s})
		}
	}
}
