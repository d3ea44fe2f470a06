package serve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/wickml/wick/internal/kvcache"
	"github.com/wickml/wick/internal/sampling"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// Config says how an Engine runs a model. Zero fields take the defaults
// their comments give.
type Config struct {
	// Model is the model served, in evaluation mode; it must implement
	// nn.BatchLM (*nn.GPT and *nn.Llama do). Nobody may change it while
	// the engine runs.
	Model nn.CausalLM
	// MaxBatch bounds the sequences in the running batch (default 16).
	MaxBatch int
	// KVCacheBytes is the memory of the key/value cache, allocated once
	// by NewEngine (default: room for MaxBatch sequences of the model's
	// whole context, at most 1 GiB).
	KVCacheBytes int64
	// BlockSize is the number of positions per cache block (default 16).
	BlockSize int
	// MaxWaiting bounds the requests waiting to join the batch; Submit
	// returns ErrFull beyond it (default 4·MaxBatch).
	MaxWaiting int
	// PrefillChunk is the most prompt tokens one step prefills, over all
	// sequences, so that a long prompt delays the running sequences'
	// next tokens by at most one chunk's time (default 64). A prompt is
	// prefilled in chunks of PrefillChunk tokens from its start, shorter
	// ones further on, where attention over the positions before makes a
	// token dearer: each chunk costs at most what the first PrefillChunk
	// tokens of a prompt cost.
	PrefillChunk int
}

// The defaults of Config's zero fields.
const (
	DefaultMaxBatch     = 16
	DefaultBlockSize    = 16
	DefaultPrefillChunk = 64
	// DefaultKVCacheBytes caps the default cache budget.
	DefaultKVCacheBytes = 1 << 30
)

// Engine runs a causal language model for many requests at once with
// continuous batching over a paged key/value cache; see the package
// documentation. Its methods may be called from many goroutines at once.
type Engine struct {
	model   nn.BatchLM
	cfg     Config // with the defaults filled in
	alloc   *kvcache.Allocator
	k, v    []*tensor.Tensor // per layer [blocks, BlockSize, kvHeads, headDim]
	kh, vh  [][]float32      // k and v's memory where they are on the CPU (attendRows), else nil
	scratch sync.Pool        // *[]float32 for decodeRow
	lists   sync.Pool        // *hostLists for attendHost
	st      stepState        // the step's slices, reused (the scheduler's goroutine alone uses them)
	// hostChunk is the most work of a prefill chunk that attends on the
	// host (hostChunkWork; tests set it before the first request)
	hostChunk int
	ctxSize   int
	vocab     int
	costs     costModel // the prefill chunks' plan

	mu      sync.Mutex
	waiting []*sequence // admitted by Submit, not yet running, in order
	running int         // admitted sequences not yet finished (Stats.Running)
	closing bool        // Shutdown or Close began: Submit refuses
	abort   bool        // Close, or a Shutdown past its deadline: cancel all
	nextID  uint64
	holding int   // blocks holding the running sequences' positions (Stats.BlocksUsed)
	counts  Stats // PromptTokens, GeneratedTokens, Steps, BatchSizes

	// observe, set by tests before the first request, sees the logits
	// each sequence samples from
	observe func(s *sequence, logits []float32)
	// stepped, set by tests before the first request, runs after each
	// step, outside the lock, before the scheduler's next turn
	stepped func()

	wake chan struct{} // a request arrived or the engine is closing
	done chan struct{} // closed when the scheduler has stopped
}

var _ Generator = (*Engine)(nil)

// sequence is one request as the scheduler runs it.
type sequence struct {
	id   kvcache.SeqID
	req  Request
	ctx  context.Context
	out  chan Event
	opts nn.GenerateOptions // sampling: Temperature, TopK, TopP, Generator

	tokens    []int // the prompt, then the tokens generated
	cached    int   // positions whose keys and values are in the cache
	generated int
	maxNew    int
	admitted  bool  // holds a reservation in the allocator
	table     []int // its blocks, from admission on
	done      bool  // its final event is sent
}

// NewEngine returns an engine for cfg and starts its scheduler; Shutdown
// or Close stops it. It returns an error when cfg.Model is nil or does
// not implement nn.BatchLM, a field is negative, or the cache cannot be
// allocated (no whole block fits KVCacheBytes, or tensor.MaxAllocBytes
// refuses it).
func NewEngine(cfg Config) (*Engine, error) {
	m, ok := cfg.Model.(nn.BatchLM)
	if !ok {
		return nil, fmt.Errorf("serve: NewEngine: the model (%T) does not implement nn.BatchLM", cfg.Model)
	}
	if cfg.MaxBatch < 0 || cfg.KVCacheBytes < 0 || cfg.BlockSize < 0 || cfg.MaxWaiting < 0 || cfg.PrefillChunk < 0 {
		return nil, fmt.Errorf("serve: NewEngine: negative field in %+v", cfg)
	}
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.BlockSize == 0 {
		cfg.BlockSize = DefaultBlockSize
	}
	if cfg.MaxWaiting == 0 {
		cfg.MaxWaiting = 4 * cfg.MaxBatch
	}
	if cfg.PrefillChunk == 0 {
		cfg.PrefillChunk = DefaultPrefillChunk
	}
	layers, kvHeads, headDim := m.KVShape()
	geo := kvcache.Geometry{Layers: layers, KVHeads: kvHeads, HeadDim: headDim, BlockSize: cfg.BlockSize, DTypeSize: 4}
	blockBytes, err := geo.BlockBytes()
	if err != nil {
		return nil, fmt.Errorf("serve: NewEngine: %w", err)
	}
	if cfg.KVCacheBytes == 0 {
		blocks := int64(cfg.MaxBatch) * int64((m.ContextSize()+cfg.BlockSize-1)/cfg.BlockSize)
		cfg.KVCacheBytes = max(min(blocks*blockBytes, DefaultKVCacheBytes), blockBytes)
	}
	nblocks, err := geo.NumBlocks(cfg.KVCacheBytes)
	if err != nil {
		return nil, fmt.Errorf("serve: NewEngine: %w", err)
	}
	e := &Engine{
		model: m, cfg: cfg, alloc: kvcache.New(nblocks, cfg.BlockSize),
		ctxSize: m.ContextSize(), vocab: m.VocabSize(), costs: newCostModel(m, cfg.PrefillChunk),
		hostChunk: hostChunkWork(headDim),
		wake:      make(chan struct{}, 1), done: make(chan struct{}),
	}
	e.counts.BatchSizes = make([]uint64, cfg.MaxBatch+1)
	dev := tensor.CPU
	if ps := m.Parameters(); len(ps) > 0 {
		dev = ps[0].Device()
	}
	if err := tensor.Catch(func() {
		for range layers {
			e.k = append(e.k, tensor.Zeros(nblocks, cfg.BlockSize, kvHeads, headDim).To(dev))
			e.v = append(e.v, tensor.Zeros(nblocks, cfg.BlockSize, kvHeads, headDim).To(dev))
		}
	}); err != nil {
		return nil, fmt.Errorf("serve: NewEngine: the key/value cache of %d bytes: %w", int64(nblocks)*blockBytes, err)
	}
	if dev == tensor.CPU {
		for l := range layers {
			e.kh = append(e.kh, e.k[l].HostFloat32s())
			e.vh = append(e.vh, e.v[l].HostFloat32s())
		}
	}
	e.scratch.New = func() any { return new([]float32) }
	e.lists.New = func() any { return new(hostLists) }
	go e.run()
	return e, nil
}

// Submit implements Generator. A nil ctx is context.Background().
func (e *Engine) Submit(ctx context.Context, r Request) (<-chan Event, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := e.check(r); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing {
		return nil, ErrClosed
	}
	if len(e.waiting) >= e.cfg.MaxWaiting {
		return nil, ErrFull
	}
	e.nextID++
	s := &sequence{
		id: kvcache.SeqID(e.nextID), ctx: ctx,
		req:    r,
		out:    make(chan Event, r.MaxTokens+1), // every event fits: a slow reader never stalls the engine
		tokens: append(make([]int, 0, len(r.Prompt)+r.MaxTokens), r.Prompt...),
		maxNew: min(r.MaxTokens, e.ctxSize-len(r.Prompt)),
		opts: nn.GenerateOptions{
			Temperature: r.Temperature, TopK: r.TopK, TopP: r.TopP,
			Generator: tensor.NewGenerator(r.Seed),
		},
	}
	s.req.Prompt = nil // s.tokens holds it
	e.waiting = append(e.waiting, s)
	e.poke()
	return s.out, nil
}

// check returns the *RequestError of a request that can never run.
func (e *Engine) check(r Request) error {
	bad := func(field, format string, args ...any) error {
		return &RequestError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if len(r.Prompt) == 0 {
		return bad("prompt", "is empty: want at least one token")
	}
	for _, t := range r.Prompt {
		if t < 0 || t >= e.vocab {
			return bad("prompt", "token %d is outside the vocabulary [0, %d)", t, e.vocab)
		}
	}
	if r.MaxTokens < 1 {
		return bad("max_tokens", "is %d: want at least 1", r.MaxTokens)
	}
	if err := sampling.CheckTemperature(float64(r.Temperature)); err != nil {
		return bad("temperature", "%s", strings.TrimPrefix(err.Error(), "="))
	}
	if r.TopK < 0 {
		return bad("top_k", "is %d: want 0 (off) or more", r.TopK)
	}
	if !(r.TopP >= 0 && r.TopP <= 1) {
		return bad("top_p", "is %v: want a number from 0 to 1", r.TopP)
	}
	if p := len(r.Prompt); r.MaxTokens > e.ctxSize-p {
		return bad("max_tokens", "the prompt's %d tokens and max_tokens %d exceed the model's context of %d tokens", p, r.MaxTokens, e.ctxSize)
	}
	if !e.alloc.Fits(len(r.Prompt), r.MaxTokens) {
		return bad("max_tokens", "the prompt's %d tokens and max_tokens %d exceed the key/value cache of %d positions", len(r.Prompt), r.MaxTokens, e.alloc.Stats().Blocks*e.cfg.BlockSize)
	}
	return nil
}

// Stats implements Generator.
func (e *Engine) Stats() Stats {
	a := e.alloc.Stats()
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.counts
	s.BatchSizes = append([]uint64(nil), e.counts.BatchSizes...)
	s.Running, s.Waiting = e.running, len(e.waiting)
	s.BlocksUsed, s.BlocksTotal = e.holding, a.Blocks
	return s
}

// Shutdown stops admitting requests (Submit returns ErrClosed), lets the
// scheduler finish every request already submitted, running or waiting,
// and returns once it has stopped. If ctx is done first, the remaining
// requests end with FinishCancelled, and Shutdown returns ctx's error once
// the scheduler has stopped.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.closing = true
	e.mu.Unlock()
	e.poke()
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		e.Close()
		return ctx.Err()
	}
}

// Close stops the engine now: Submit returns ErrClosed, every request in
// flight ends with FinishCancelled (after the step that is running, if
// any), and Close returns once the scheduler has stopped. Closing twice
// is harmless.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closing, e.abort = true, true
	e.mu.Unlock()
	e.poke()
	<-e.done
}

// poke wakes the scheduler if it waits for work.
func (e *Engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// run is the scheduler: between steps it ends cancelled requests, joins
// waiting ones whose reservation fits, and runs a step over the running
// batch; with nothing to run it sleeps until a request arrives.
func (e *Engine) run() {
	defer close(e.done)
	var running []*sequence
	for {
		e.mu.Lock()
		abort := e.abort
		running = e.dropCancelled(running, abort)
		w := e.waiting[:0]
		for _, s := range e.waiting {
			if abort || s.ctx.Err() != nil {
				e.finish(s, FinishCancelled, nil)
				continue
			}
			w = append(w, s)
		}
		clear(e.waiting[len(w):])
		e.waiting = w
		// first come, first served: the head waits for room rather than
		// being overtaken forever by smaller requests
		for len(e.waiting) > 0 && len(running) < e.cfg.MaxBatch {
			s := e.waiting[0]
			if e.alloc.Admit(s.id, len(s.tokens), s.maxNew) != nil {
				break
			}
			s.admitted = true
			e.running++
			// every block the sequence may fill (its last token is never
			// fed back), taken at once: blocks taken together from the
			// top of the free stack are mostly consecutive, and attention
			// then reads them in place instead of gathering them
			table, err := e.alloc.Append(s.id, len(s.tokens)+s.maxNew-1)
			if err != nil {
				panic(fmt.Sprintf("serve: the cache refused a reserved position: %v", err)) // cannot happen
			}
			s.table = table
			running = append(running, s)
			e.waiting[0] = nil
			e.waiting = e.waiting[1:]
		}
		if len(running) == 0 {
			stop := e.closing && len(e.waiting) == 0
			e.mu.Unlock()
			if stop {
				return
			}
			<-e.wake
			continue
		}
		e.mu.Unlock()
		running = e.safeStep(running)
		if e.stepped != nil {
			e.stepped()
		}
	}
}

// safeStep is step, with a panic outside the model's forward pass (whose
// panics step handles itself) ending every running request with
// FinishError instead of the process.
func (e *Engine) safeStep(running []*sequence) (left []*sequence) {
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("serve: the engine's step failed: %v", r)
			e.mu.Lock()
			for _, s := range running {
				e.finish(s, FinishError, err)
			}
			e.mu.Unlock()
			left = nil
		}
	}()
	return e.step(running)
}

// dropCancelled ends the running sequences whose context is done (all of
// them with abort) and returns the others. It runs with e.mu held.
func (e *Engine) dropCancelled(running []*sequence, abort bool) []*sequence {
	keep := running[:0]
	for _, s := range running {
		if abort || s.ctx.Err() != nil {
			e.finish(s, FinishCancelled, nil)
			continue
		}
		keep = append(keep, s)
	}
	clear(running[len(keep):])
	return keep
}

// finish frees s's blocks and takes it out of Stats' running count, then
// sends its final event and closes its channel (so that a client who has
// read the final event finds the blocks free and the sequence no longer
// running). It runs with e.mu held.
func (e *Engine) finish(s *sequence, why FinishReason, err error) {
	if s.done {
		return
	}
	s.done = true
	if s.admitted {
		e.alloc.Free(s.id)
		e.holding -= e.alloc.BlocksFor(s.cached)
		e.running--
		s.admitted = false
	}
	s.out <- Event{Token: -1, Finish: why, Err: err}
	close(s.out)
}

// errNonFinite is wrapped by the Err of a request whose logits were not
// finite (a model with NaN or infinite weights or activations).
var errNonFinite = errors.New("serve: the model's logits are not finite")

// finite reports whether every element of row is a finite number.
func finite(row []float32) bool {
	for _, v := range row {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}
