package autograd

import (
	"sync"
	"sync/atomic"
)

// Goroutine-scoped values, for state that lives on the goroutine that
// creates it while a function runs: package tensor keeps there the list of
// CPU buffers that a backward pass or a tensor.Scope allocates, so that it
// can reuse those nobody else can reach. Like grad mode, a value lives in a
// table keyed by the calling goroutine (goroutineKey) only while WithScope
// runs, and a count of entries lets CurrentScope answer nil with one atomic
// load while no goroutine is inside WithScope.

type scopeShard struct {
	mu sync.Mutex
	v  map[uintptr]any
	_  [64 - 16]byte // pad to 64 bytes: shards on separate cache lines
}

var (
	scopeTable [modeShards]scopeShard
	scopeCount atomic.Int64 // entries in scopeTable
)

func scopeShardOf(g uintptr) *scopeShard { return &scopeTable[(g>>9^g>>15)%modeShards] }

// setScope sets goroutine g's value to v (nil removes it) and returns the
// value it replaces.
func setScope(g uintptr, v any) (was any) {
	s := scopeShardOf(g)
	s.mu.Lock()
	was, had := s.v[g]
	switch {
	case v == nil && had:
		delete(s.v, g)
		scopeCount.Add(-1)
	case v != nil:
		if s.v == nil {
			s.v = map[uintptr]any{}
		}
		s.v[g] = v
		if !had {
			scopeCount.Add(1)
		}
	}
	s.mu.Unlock()
	return was
}

// WithScope runs f with v as the calling goroutine's scope value, which
// CurrentScope returns on this goroutine (and on no other, including
// goroutines that f starts) until f returns or panics; then the previous
// value comes back. A nil v hides an outer value from f. Calls nest. It is
// meant for package tensor's bookkeeping of CPU memory.
func WithScope(v any, f func()) {
	g := goroutineKey()
	was := setScope(g, v)
	defer setScope(g, was)
	f()
}

// CurrentScope returns the value of the innermost WithScope running on the
// calling goroutine, or nil.
func CurrentScope() any {
	if scopeCount.Load() == 0 {
		return nil
	}
	g := goroutineKey()
	s := scopeShardOf(g)
	s.mu.Lock()
	v := s.v[g]
	s.mu.Unlock()
	return v
}

// Goroutine-local values under a key, for package tensor's state that must
// live beside the scope value (the random-number replay of
// tensor.Checkpoint): the same table design, one entry per goroutine and
// key while WithLocal runs.

type localKey struct {
	g uintptr
	k any
}

type localShard struct {
	mu sync.Mutex
	v  map[localKey]any
	_  [64 - 16]byte
}

var (
	localTable [modeShards]localShard
	localCount atomic.Int64
)

// WithLocal runs f with v stored under key for the calling goroutine, which
// Local(key) returns on this goroutine (and no other) until f returns or
// panics; then the previous value comes back. key must be comparable.
// Calls nest.
func WithLocal(key, v any, f func()) {
	lk := localKey{goroutineKey(), key}
	s := &localTable[(lk.g>>9^lk.g>>15)%modeShards]
	s.mu.Lock()
	was, had := s.v[lk]
	if s.v == nil {
		s.v = map[localKey]any{}
	}
	s.v[lk] = v
	if !had {
		localCount.Add(1)
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if had {
			s.v[lk] = was
		} else {
			delete(s.v, lk)
			localCount.Add(-1)
		}
		s.mu.Unlock()
	}()
	f()
}

// Local returns the value of the innermost WithLocal for key on the
// calling goroutine, or nil.
func Local(key any) any {
	if localCount.Load() == 0 {
		return nil
	}
	g := goroutineKey()
	s := &localTable[(g>>9^g>>15)%modeShards]
	s.mu.Lock()
	v := s.v[localKey{g, key}]
	s.mu.Unlock()
	return v
}
