package serve

import (
	"context"
	"errors"
	"sync"

	"github.com/wickml/wick/tokenizer"
)

// fakeGen is a Generator for the HTTP layer's tests: it answers each
// request with the tokens of script (its text in the test tokenizer),
// one event each, unless told otherwise, and records what it was asked.
type fakeGen struct {
	mu       sync.Mutex
	reqs     []Request
	script   func(r Request) []int // the tokens of a request's answer
	finish   FinishReason          // the final event's reason (FinishLength when empty)
	failAt   int                   // with failErr: fail after this many tokens
	failErr  error
	submit   error         // returned by Submit
	block    chan struct{} // when set, each token waits for it (or the context)
	panicked bool          // Submit panics
	cancels  int           // requests that ended cancelled
}

var testTok = tokenizer.NewChar([]byte("abcdefghijklmnopqrstuvwxyz ,.:!?\n"))

// ids returns the test tokenizer's tokens of s.
func ids(s string) []int {
	v, err := tokenizer.EncodeStrict(testTok, s)
	if err != nil {
		panic(err)
	}
	return v
}

func (f *fakeGen) Submit(ctx context.Context, r Request) (<-chan Event, error) {
	if f.panicked {
		panic("fake engine: boom")
	}
	if f.submit != nil {
		return nil, f.submit
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, r)
	f.mu.Unlock()
	toks := ids("hello world")
	if f.script != nil {
		toks = f.script(r)
	}
	ch := make(chan Event)
	go func() {
		defer close(ch)
		send := func(ev Event) bool {
			select {
			case ch <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		cancelled := func() {
			f.mu.Lock()
			f.cancels++
			f.mu.Unlock()
			ch <- Event{Token: -1, Finish: FinishCancelled}
		}
		for i, t := range toks {
			if i == r.MaxTokens {
				ch <- Event{Token: -1, Finish: FinishLength}
				return
			}
			if f.failErr != nil && i == f.failAt {
				ch <- Event{Token: -1, Finish: FinishError, Err: f.failErr}
				return
			}
			if f.block != nil {
				select {
				case <-f.block:
				case <-ctx.Done():
					cancelled()
					return
				}
			}
			for _, s := range r.StopIDs {
				if t == s {
					ch <- Event{Token: -1, Finish: FinishStop}
					return
				}
			}
			if !send(Event{Token: t}) {
				cancelled()
				return
			}
		}
		if f.failErr != nil && f.failAt >= len(toks) {
			ch <- Event{Token: -1, Finish: FinishError, Err: f.failErr}
			return
		}
		fin := f.finish
		if fin == "" {
			fin = FinishLength
		}
		if ctx.Err() != nil {
			cancelled()
			return
		}
		ch <- Event{Token: -1, Finish: fin}
	}()
	return ch, nil
}

func (f *fakeGen) Stats() Stats {
	return Stats{Running: 2, Waiting: 1, BlocksUsed: 3, BlocksTotal: 10, PromptTokens: 7, GeneratedTokens: 9, Steps: 6,
		BatchSizes: []uint64{0, 3, 2, 0, 1}}
}

func (f *fakeGen) requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

var errNaN = errors.New("the logits are not finite (NaN or Inf)")
