// Package parallel runs loop bodies on one persistent pool of worker
// goroutines shared by Wick's CPU kernels, so that nested or concurrent
// parallel loops never start more goroutines than there are processors.
//
// The pool holds Workers()-1 goroutines; the goroutine that calls For always
// takes part in its own loop, so a call never waits for a worker to become
// free: ranges that no idle worker picks up are run by the caller. This makes
// nested calls (a For inside a For) safe and keeps the number of busy
// goroutines bounded by Workers().
//
// Waking a parked goroutine costs tens to hundreds of microseconds when its
// processor has gone idle (on a virtual machine the idle vCPU must be woken
// too), which is longer than many loops take. So a worker that finishes a
// loop keeps polling for the next one for a short while (spinWait) before it
// parks, and a caller whose last ranges are still running on workers polls
// for them as long before it blocks. The polls yield to other goroutines,
// and last at most spinWait after each loop.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinWait is how long an idle worker polls for new loops, and a caller for
// its last ranges, before blocking.
const spinWait = 100 * time.Microsecond

var (
	startOnce sync.Once
	nworkers  int
	work      chan *job // unbuffered: a send succeeds only to a parked worker
	posted    atomic.Pointer[job]
)

// Workers returns the number of goroutines (the caller included) that a
// parallel loop can use: GOMAXPROCS at the time the pool was first used.
func Workers() int {
	startOnce.Do(start)
	return nworkers
}

func start() {
	nworkers = max(1, runtime.GOMAXPROCS(0))
	work = make(chan *job)
	for range nworkers - 1 {
		go worker()
	}
}

func worker() {
	for {
		if j := pollPosted(); j != nil {
			j.run()
			continue
		}
		j := <-work
		j.run()
	}
}

// pollPosted waits up to spinWait for a posted loop with ranges left to
// claim, yielding the processor between looks.
func pollPosted() *job {
	start := time.Now()
	for i := 0; ; i++ {
		if j := posted.Load(); j != nil && j.next.Load() < j.parts {
			return j
		}
		if i%32 == 31 {
			if time.Since(start) > spinWait {
				return nil
			}
			runtime.Gosched()
		}
	}
}

// job is one parallel loop: ranges are claimed with an atomic counter by the
// caller and by the workers that joined. remaining counts the ranges not yet
// finished, so the caller waits for the work, never for a worker that woke
// too late to find any.
type job struct {
	fn        func(lo, hi int)
	n         int
	parts     int64
	next      atomic.Int64
	remaining atomic.Int64
	done      chan struct{} // receives once remaining reaches 0
	mu        sync.Mutex
	panicv    any
}

func (j *job) run() {
	for {
		i := j.next.Add(1) - 1
		if i >= j.parts {
			return
		}
		j.runRange(i)
	}
}

func (j *job) runRange(i int64) {
	defer func() {
		if r := recover(); r != nil {
			j.mu.Lock()
			if j.panicv == nil {
				j.panicv = r
			}
			j.mu.Unlock()
			// stop the others claiming; the ranges nobody claimed yet
			// will not run, so they are finished too
			if claimed := j.next.Swap(j.parts); claimed < j.parts {
				j.finish(j.parts - claimed)
			}
		}
		j.finish(1)
	}()
	// parts ranges of equal length (±1)
	j.fn(int(i)*j.n/int(j.parts), int(i+1)*j.n/int(j.parts))
}

// finish records c more ranges as finished.
func (j *job) finish(c int64) {
	if j.remaining.Add(-c) == 0 {
		j.done <- struct{}{}
	}
}

// wait returns once every range has finished: it polls for up to spinWait,
// then blocks.
func (j *job) wait() {
	start := time.Now()
	for i := 0; j.remaining.Load() != 0; i++ {
		if i%32 == 31 {
			if time.Since(start) > spinWait {
				<-j.done
				return
			}
			runtime.Gosched()
		}
	}
}

// chunksPerWorker is how many ranges For makes per worker (when n allows):
// ranges are claimed one at a time, so a goroutine that the OS runs less
// often (the machine is shared, or another loop holds a worker) simply
// claims fewer of them.
const chunksPerWorker = 4

// For calls fn on consecutive ranges [lo, hi) that together cover [0, n),
// of equal length (±1), each at least grain long, and as many as
// chunksPerWorker per worker or, when n allows fewer, a multiple of the
// workers (so that they finish together). The ranges run
// concurrently on the calling goroutine and on idle workers of the pool,
// each claiming the next unclaimed range until none is left; For returns
// when all have finished. With one range (n < 2·grain, or a single
// processor) fn(0, n) runs directly on the caller. A panic in fn is re-raised
// on the caller once the ranges already started are done; ranges not yet
// started are then skipped.
func For(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	w := Workers()
	parts := min(chunksPerWorker*w, n/max(grain, 1))
	if parts > w && parts < chunksPerWorker*w {
		// a multiple of the workers, so that they finish together: 3
		// ranges on 2 workers take 2/3 of the serial time, 2 take 1/2
		parts -= parts % w
	}
	if w == 1 || parts <= 1 {
		fn(0, n)
		return
	}
	j := &job{fn: fn, n: n, parts: int64(parts), done: make(chan struct{}, 1)}
	j.remaining.Store(int64(parts))
	// polling workers find the loop here; parked ones are woken, as many
	// as could have a range (busy ones are not waited for)
	posted.Store(j)
	for range min(w, parts) - 1 {
		select {
		case work <- j:
			continue
		default:
		}
		break
	}
	j.run()
	j.wait()
	// drop the reference so the loop's closure (and what it holds) can be
	// collected
	posted.CompareAndSwap(j, nil)
	j.mu.Lock()
	p := j.panicv
	j.mu.Unlock()
	if p != nil {
		panic(p)
	}
}
