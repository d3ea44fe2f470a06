// Package kvcache is the block allocator of a paged key/value cache: the
// cache's memory is cut into fixed-size blocks of BlockSize token positions
// (every layer's keys and values for those positions), and each sequence
// holds a block table, the list of blocks its positions live in, so that
// sequences of any length share one pool without fragmentation.
//
// The allocator is model-agnostic: it hands out block numbers, and the
// engine that owns the cache tensors maps a sequence's position p to block
// table[p/BlockSize], slot p%BlockSize. A sequence is admitted with the
// room it may need (its prompt plus max_tokens), which is reserved so that
// a running sequence never runs out of blocks; blocks are taken from the
// pool only as tokens are appended, and all of them go back, with the rest
// of the reservation, when the sequence finishes or is cancelled. Freed
// blocks are handed out again first (a stack), while they are warm in the
// caches.
//
// An Allocator is safe for concurrent use by multiple goroutines (a
// mutex guards it), so that an HTTP handler may free a cancelled request's
// blocks while the scheduler goroutine appends to others.
package kvcache

import (
	"errors"
	"fmt"
	"sync"
)

// Geometry is the shape of one cache block: a block holds BlockSize token
// positions of keys and values for every layer and key/value head.
type Geometry struct {
	Layers    int // transformer layers
	KVHeads   int // key/value heads per layer (fewer than query heads under GQA)
	HeadDim   int // elements per head
	BlockSize int // token positions per block
	DTypeSize int // bytes per element (4 for float32, 2 for bf16)
}

// BlockBytes returns the bytes of one block: keys and values,
// 2 × Layers × KVHeads × HeadDim × BlockSize × DTypeSize. It returns an
// error when a field is not positive or the product overflows.
func (g Geometry) BlockBytes() (int64, error) {
	b := int64(2)
	for _, f := range []struct {
		name string
		v    int
	}{{"Layers", g.Layers}, {"KVHeads", g.KVHeads}, {"HeadDim", g.HeadDim}, {"BlockSize", g.BlockSize}, {"DTypeSize", g.DTypeSize}} {
		if f.v <= 0 {
			return 0, fmt.Errorf("kvcache: Geometry.%s is %d, want > 0", f.name, f.v)
		}
		if b > (1<<62)/int64(f.v) {
			return 0, errors.New("kvcache: block size in bytes overflows")
		}
		b *= int64(f.v)
	}
	return b, nil
}

// NumBlocks returns how many whole blocks fit in budget bytes. It returns
// an error when the geometry is invalid or not even one block fits.
func (g Geometry) NumBlocks(budget int64) (int, error) {
	bb, err := g.BlockBytes()
	if err != nil {
		return 0, err
	}
	n := budget / bb
	if n < 1 {
		return 0, fmt.Errorf("kvcache: a budget of %d bytes holds no block of %d bytes", budget, bb)
	}
	if n > int64(maxBlocks) {
		n = int64(maxBlocks)
	}
	return int(n), nil
}

const maxBlocks = 1 << 31

// SeqID names a sequence; the caller chooses it (a request's number).
type SeqID uint64

// Errors the allocator returns; test them with errors.Is.
var (
	// ErrNoSpace: the unreserved blocks cannot hold the request.
	ErrNoSpace = errors.New("kvcache: not enough free blocks")
	// ErrUnknownSequence: no admitted sequence has that id.
	ErrUnknownSequence = errors.New("kvcache: unknown sequence")
	// ErrDuplicateSequence: a sequence with that id is already admitted.
	ErrDuplicateSequence = errors.New("kvcache: sequence already admitted")
	// ErrOverReservation: an append would pass the tokens reserved at
	// admission.
	ErrOverReservation = errors.New("kvcache: append beyond the sequence's reservation")
)

type sequence struct {
	tokens   int   // positions appended
	reserved int   // blocks reserved at admission
	table    []int // blocks in use, in position order
}

// Allocator hands out the blocks of one cache. The zero value is not
// usable; call New.
type Allocator struct {
	blockSize int
	total     int

	mu       sync.Mutex
	free     []int // stack of free blocks: the last freed is taken first
	reserved int   // sum of the sequences' reservations
	seqs     map[SeqID]*sequence
}

// New returns an allocator of numBlocks blocks of blockSize positions
// each, all free. It panics if either is not positive (a programmer
// error: Geometry.NumBlocks validates outside input).
func New(numBlocks, blockSize int) *Allocator {
	if numBlocks <= 0 || blockSize <= 0 || numBlocks > maxBlocks {
		panic(fmt.Sprintf("kvcache: New(%d, %d): want 0 < numBlocks <= 2^31 and blockSize > 0", numBlocks, blockSize))
	}
	free := make([]int, numBlocks)
	for i := range free {
		free[i] = numBlocks - 1 - i // block 0 on top
	}
	return &Allocator{blockSize: blockSize, total: numBlocks, free: free, seqs: map[SeqID]*sequence{}}
}

// BlockSize returns the positions per block.
func (a *Allocator) BlockSize() int { return a.blockSize }

// BlocksFor returns the blocks that tokens positions occupy.
func (a *Allocator) BlocksFor(tokens int) int {
	if tokens <= 0 {
		return 0
	}
	return (tokens-1)/a.blockSize + 1
}

func (a *Allocator) need(promptTokens, maxTokens int) (int, error) {
	if promptTokens < 0 || maxTokens < 0 {
		return 0, fmt.Errorf("kvcache: prompt of %d tokens and max_tokens %d: want both >= 0", promptTokens, maxTokens)
	}
	if promptTokens > maxBlocks || maxTokens > maxBlocks {
		return a.total + 1, nil
	}
	return a.BlocksFor(promptTokens + maxTokens), nil
}

// CanAdmit reports whether a request of promptTokens prompt tokens that
// may generate maxTokens more would be admitted now.
func (a *Allocator) CanAdmit(promptTokens, maxTokens int) bool {
	n, err := a.need(promptTokens, maxTokens)
	if err != nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return n <= a.total-a.reserved
}

// Fits reports whether a request of that size could ever be admitted, on
// an empty cache (a server answers a request that never fits with an
// error rather than a wait).
func (a *Allocator) Fits(promptTokens, maxTokens int) bool {
	n, err := a.need(promptTokens, maxTokens)
	return err == nil && n <= a.total
}

// Admit admits sequence id, reserving the blocks of promptTokens +
// maxTokens positions; no block is taken until Append. It returns
// ErrNoSpace when the unreserved blocks are too few (the request waits or
// is refused), ErrDuplicateSequence when id is admitted already.
func (a *Allocator) Admit(id SeqID, promptTokens, maxTokens int) error {
	n, err := a.need(promptTokens, maxTokens)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.seqs[id]; ok {
		return fmt.Errorf("%w: %d", ErrDuplicateSequence, id)
	}
	if n > a.total-a.reserved {
		return fmt.Errorf("%w: %d needed, %d unreserved of %d", ErrNoSpace, n, a.total-a.reserved, a.total)
	}
	a.reserved += n
	a.seqs[id] = &sequence{reserved: n}
	return nil
}

// Append adds n positions to sequence id, taking blocks from the pool as
// they fill, and returns the sequence's block table (a copy). It returns
// ErrUnknownSequence, or ErrOverReservation (appending nothing) when the
// sequence would pass its reservation.
func (a *Allocator) Append(id SeqID, n int) ([]int, error) {
	if n < 0 {
		return nil, fmt.Errorf("kvcache: Append of %d positions: want >= 0", n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.seqs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrUnknownSequence, id)
	}
	if n > maxBlocks || a.BlocksFor(s.tokens+n) > s.reserved {
		return nil, fmt.Errorf("%w: sequence %d has %d positions, %d blocks reserved; %d more asked", ErrOverReservation, id, s.tokens, s.reserved, n)
	}
	s.tokens += n
	for len(s.table) < a.BlocksFor(s.tokens) {
		// Reservations never exceed the pool, so a reserved block is
		// always free to take.
		b := a.free[len(a.free)-1]
		a.free = a.free[:len(a.free)-1]
		s.table = append(s.table, b)
	}
	return append([]int(nil), s.table...), nil
}

// BlockTable returns a copy of sequence id's block table and its length in
// positions, or ErrUnknownSequence.
func (a *Allocator) BlockTable(id SeqID) ([]int, int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.seqs[id]
	if !ok {
		return nil, 0, fmt.Errorf("%w: %d", ErrUnknownSequence, id)
	}
	return append([]int(nil), s.table...), s.tokens, nil
}

// Free returns sequence id's blocks to the pool and drops its
// reservation, when it finishes or is cancelled. It reports whether id was
// admitted (freeing twice is harmless).
func (a *Allocator) Free(id SeqID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.seqs[id]
	if !ok {
		return false
	}
	// Last block first, so that the next sequence takes the first one
	// first, in the same order.
	for i := len(s.table) - 1; i >= 0; i-- {
		a.free = append(a.free, s.table[i])
	}
	a.reserved -= s.reserved
	delete(a.seqs, id)
	return true
}

// Stats are the allocator's counters, for /metrics.
type Stats struct {
	Blocks    int // blocks in the cache
	InUse     int // blocks holding positions
	Free      int // blocks not holding positions (Blocks - InUse)
	Reserved  int // blocks reserved by admitted sequences (>= InUse)
	Sequences int // admitted sequences
}

// Stats returns the counters at this moment.
func (a *Allocator) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Stats{Blocks: a.total, InUse: a.total - len(a.free), Free: len(a.free), Reserved: a.reserved, Sequences: len(a.seqs)}
}
