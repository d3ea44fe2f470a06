package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls f(0) … f(n−1) on up to GOMAXPROCS goroutines of its own, each
// taking the next index until none is left, and returns when all have
// returned; the first panic in f is re-raised on the caller's goroutine
// (indices not yet taken are then skipped). It is for a few coarse tasks
// that themselves run parallel loops — a batch's attention per sequence,
// sampling per request — which For's pool would serialise behind one
// another; with one processor or one task f runs on the caller.
func Each(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var (
		next   atomic.Int64
		wg     sync.WaitGroup
		once   sync.Once
		failed any
		stop   atomic.Bool
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					once.Do(func() { failed = r })
					stop.Store(true)
				}
			}()
			for i := int(next.Add(1)) - 1; i < n && !stop.Load(); i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		panic(failed)
	}
}
