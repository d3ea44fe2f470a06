package dist

import (
	"fmt"
	"sync"

	"github.com/wickml/wick/tensor"
)

// NewLocalGroup returns n Comms, ranks 0 to n-1 of one job whose ranks are
// goroutines of this process: give each Comm to its own goroutine. The
// collectives behave as over MPI (sums are taken in rank order, so results
// are the same on every rank), with the timeout of cfg as in InitWith. It
// is for tests and for trying data-parallel code on one machine; it works
// in every build.
//
// NewLocalGroup panics if n < 1.
func NewLocalGroup(n int, cfg Config) ([]*Comm, error) {
	if n < 1 {
		panic(&tensor.Error{Op: "dist.NewLocalGroup", Msg: fmt.Sprintf("a group needs at least 1 rank, got %d", n)})
	}
	timeout, err := resolveTimeout(cfg.Timeout)
	if err != nil {
		return nil, err
	}
	g := &localGroup{n: n, slots: make([]any, n), gate: make(chan struct{})}
	comms := make([]*Comm, n)
	for r := range comms {
		comms[r] = &Comm{tr: &localRank{g: g, rank: r}, rank: r, size: n, localRank: r, backend: "local goroutines", timeout: timeout}
	}
	return comms, nil
}

// localGroup is the shared state of a group: each collective deposits every
// rank's argument in slots, then meets at a barrier, reads, and meets
// again before anyone may deposit the next.
type localGroup struct {
	n     int
	mu    sync.Mutex
	count int           // ranks arrived at the current barrier
	gate  chan struct{} // closed when the current barrier opens
	slots []any
	err   error // set by abort
}

// wait returns when all n ranks have called it (a reusable barrier).
func (g *localGroup) wait() error {
	g.mu.Lock()
	if g.err != nil {
		g.mu.Unlock()
		return g.err
	}
	gate := g.gate
	g.count++
	if g.count == g.n {
		g.count = 0
		g.gate = make(chan struct{})
		close(gate)
		g.mu.Unlock()
		return nil
	}
	g.mu.Unlock()
	<-gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// localRank is one rank's transport.
type localRank struct {
	g    *localGroup
	rank int
}

// exchange deposits v, waits for every rank, calls read with all the
// deposits, and waits again so that no deposit changes while another rank
// reads it.
func (l *localRank) exchange(v any, read func([]any) error) error {
	l.g.slots[l.rank] = v
	if err := l.g.wait(); err != nil {
		return err
	}
	rerr := read(l.g.slots)
	if err := l.g.wait(); err != nil {
		return err
	}
	return rerr
}

func (l *localRank) allReduceSum(buf []float32) error {
	var sum []float32
	err := l.exchange(buf, func(all []any) error {
		sum = make([]float32, len(buf))
		for r, v := range all {
			b := v.([]float32)
			if len(b) != len(buf) {
				return fmt.Errorf("rank %d passed %d elements, rank %d passed %d", r, len(b), l.rank, len(buf))
			}
			for i, x := range b {
				sum[i] += x
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	copy(buf, sum)
	return nil
}

func (l *localRank) broadcast(buf []float32, root int) error {
	return l.exchange(buf, func(all []any) error {
		src := all[root].([]float32)
		if len(src) != len(buf) {
			return fmt.Errorf("root %d passed %d elements, rank %d passed %d", root, len(src), l.rank, len(buf))
		}
		if l.rank != root {
			copy(buf, src)
		}
		return nil
	})
}

func (l *localRank) broadcastBytes(buf []byte, root int) error {
	var tmp []byte
	err := l.exchange(buf, func(all []any) error {
		src := all[root].([]byte)
		if len(src) != len(buf) {
			return fmt.Errorf("root %d passed %d bytes, rank %d passed %d", root, len(src), l.rank, len(buf))
		}
		tmp = append([]byte(nil), src...)
		return nil
	})
	if err == nil {
		copy(buf, tmp)
	}
	return err
}

func (l *localRank) allGather(b []byte) ([][]byte, error) {
	var out [][]byte
	err := l.exchange(b, func(all []any) error {
		out = make([][]byte, len(all))
		for r, v := range all {
			out[r] = append([]byte(nil), v.([]byte)...)
		}
		return nil
	})
	return out, err
}

func (l *localRank) barrier() error { return l.g.wait() }

func (l *localRank) finalize() error { return nil }

// abort breaks the group: every rank waiting in a collective, and every
// later collective, returns an error.
func (l *localRank) abort(code int) {
	l.g.mu.Lock()
	defer l.g.mu.Unlock()
	if l.g.err == nil {
		l.g.err = fmt.Errorf("rank %d aborted the group with status %d", l.rank, code)
		close(l.g.gate)
	}
}
