package autograd

import (
	"sync"
	"sync/atomic"
)

// Grad mode is goroutine-scoped, like PyTorch's thread-local grad mode: NoGrad
// switches recording off for the goroutine that calls it and for no other.
//
// Go has no goroutine-local storage, so the mode lives in a table keyed by
// the calling goroutine (goroutineKey: the runtime's pointer to the running
// goroutine, read in a few instructions of assembly on amd64 and arm64). A
// goroutine has an entry only while it runs inside NoGrad, and a count of
// entries lets Enabled answer "on" with a single atomic load while no
// goroutine anywhere is inside NoGrad — the case of a training loop. The
// entry is removed when NoGrad returns or panics, so a goroutine that exits
// leaves nothing behind for a later goroutine that reuses its key.

// modeShards spreads the table over several locks so that goroutines that
// switch modes at the same time rarely contend.
const modeShards = 64

type modeShard struct {
	mu  sync.Mutex
	off map[uintptr]struct{} // goroutines with recording switched off
	_   [64 - 16]byte        // pad to 64 bytes: shards on separate cache lines
}

var (
	modeTable [modeShards]modeShard
	offCount  atomic.Int64 // entries in modeTable: goroutines inside NoGrad
)

func shardOf(g uintptr) *modeShard {
	// The keys are pointers to runtime structures of a few hundred bytes:
	// mix the middle bits into the index.
	return &modeTable[(g>>9^g>>15)%modeShards]
}

// setEnabled sets the calling goroutine's mode (key g) and returns the mode it
// replaces.
func setEnabled(g uintptr, on bool) (was bool) {
	s := shardOf(g)
	s.mu.Lock()
	_, off := s.off[g]
	switch {
	case on && off:
		delete(s.off, g)
		offCount.Add(-1)
	case !on && !off:
		if s.off == nil {
			s.off = map[uintptr]struct{}{}
		}
		s.off[g] = struct{}{}
		offCount.Add(1)
	}
	s.mu.Unlock()
	return !off
}

// withMode runs f on the calling goroutine with recording set to on, and
// restores the goroutine's previous mode when f returns or panics.
func withMode(on bool, f func()) {
	g := goroutineKey()
	was := setEnabled(g, on)
	defer setEnabled(g, was)
	f()
}

// NoGrad runs f with recording switched off on the calling goroutine:
// operations that f runs on this goroutine record no nodes, and their results
// do not require a gradient. Operations on other goroutines, including
// goroutines that f starts, record as before (PyTorch's grad mode is
// thread-local; this is the Go equivalent). Calls nest.
func NoGrad(f func()) { withMode(false, f) }

// EnableGrad runs f with recording switched on for the calling goroutine,
// also inside NoGrad, like torch.enable_grad. The previous mode comes back
// when f returns.
func EnableGrad(f func()) { withMode(true, f) }

// Enabled reports whether operations run by the calling goroutine are
// recorded.
func Enabled() bool {
	if offCount.Load() == 0 {
		return true
	}
	g := goroutineKey()
	s := shardOf(g)
	s.mu.Lock()
	_, off := s.off[g]
	s.mu.Unlock()
	return !off
}
