package parallel

import (
	"sync"
	"sync/atomic"
	"testing"
)

// cover runs For(n, grain) and checks that every index is visited once and
// the ranges respect grain and the worker count.
func cover(t *testing.T, n, grain int) {
	t.Helper()
	seen := make([]atomic.Int32, max(n, 0))
	var mu sync.Mutex
	var ranges [][2]int
	For(n, grain, func(lo, hi int) {
		mu.Lock()
		ranges = append(ranges, [2]int{lo, hi})
		mu.Unlock()
		for i := lo; i < hi; i++ {
			seen[i].Add(1)
		}
	})
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("For(%d, %d): index %d visited %d times", n, grain, i, c)
		}
	}
	if len(ranges) > chunksPerWorker*Workers() && len(ranges) > 1 {
		t.Fatalf("For(%d, %d): %d ranges for %d workers", n, grain, len(ranges), Workers())
	}
	for _, r := range ranges {
		if r[1]-r[0] < grain && len(ranges) > 1 {
			t.Fatalf("For(%d, %d): range %v shorter than the grain", n, grain, r)
		}
		if len(ranges) > 1 && r[1]-r[0] > n/len(ranges)+1 {
			t.Fatalf("For(%d, %d): range %v longer than %d/%d+1 (unbalanced)", n, grain, r, n, len(ranges))
		}
	}
	if w := Workers(); len(ranges) > w && len(ranges) < chunksPerWorker*w && len(ranges)%w != 0 {
		t.Fatalf("For(%d, %d): %d ranges on %d workers, not a multiple", n, grain, len(ranges), w)
	}
}

func TestForCovers(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 100, 1001, 98304} {
		for _, grain := range []int{0, 1, 2, 5, 14, 30, 1000, 5000, 32768} {
			cover(t, n, grain)
		}
	}
}

func TestForNested(t *testing.T) {
	var total atomic.Int64
	For(8, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			For(100, 1, func(lo, hi int) {
				for j := lo; j < hi; j++ {
					total.Add(int64(i*100 + j))
				}
			})
		}
	})
	// Σ_{x<800} x
	if got, want := total.Load(), int64(800*799/2); got != want {
		t.Fatalf("nested For summed %d, want %d", got, want)
	}
}

func TestForConcurrentCallers(t *testing.T) {
	var wg sync.WaitGroup
	var total atomic.Int64
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				For(1000, 10, func(lo, hi int) {
					total.Add(int64((hi - lo) * (g + 1)))
				})
			}
		}()
	}
	wg.Wait()
	if got, want := total.Load(), int64(50*1000*36); got != want {
		t.Fatalf("concurrent For calls counted %d, want %d", got, want)
	}
}

func TestForPanic(t *testing.T) {
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the panic from fn", r)
			}
		}()
		For(100, 1, func(lo, hi int) {
			if lo <= 50 && 50 < hi {
				panic("boom")
			}
		})
	}()
	// the pool still works after a panic
	cover(t, 100, 1)
}
