package autograd

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentNoGradIsPerGoroutine: NoGrad on one goroutine leaves
// recording on for every other goroutine, while it is active and after.
func TestConcurrentNoGradIsPerGoroutine(t *testing.T) {
	inside, release := make(chan bool), make(chan struct{})
	go func() {
		NoGrad(func() {
			inside <- Enabled()
			<-release
		})
	}()
	if <-inside {
		t.Fatal("Enabled() inside NoGrad = true on NoGrad's own goroutine")
	}
	if !Enabled() {
		t.Error("Enabled() = false on another goroutine while one goroutine is inside NoGrad")
	}
	done := make(chan bool)
	go func() { done <- Enabled() }()
	if !<-done {
		t.Error("Enabled() = false on a third goroutine while one goroutine is inside NoGrad")
	}
	close(release)
}

// TestConcurrentModesNestAndRestore runs many goroutines that nest NoGrad and
// EnableGrad and check their own mode at each level.
func TestConcurrentModesNestAndRestore(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				check := func(want bool, where string) {
					if Enabled() != want {
						errs <- where
					}
				}
				check(true, "outside")
				NoGrad(func() {
					check(false, "NoGrad")
					if (g+i)%2 == 0 {
						NoGrad(func() { check(false, "nested NoGrad") })
					}
					EnableGrad(func() { check(true, "EnableGrad inside NoGrad") })
					check(false, "NoGrad after EnableGrad")
				})
				check(true, "after NoGrad")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("wrong mode %s", e)
	}
	if n := offCount.Load(); n != 0 {
		t.Errorf("%d goroutines still recorded as inside NoGrad after every NoGrad returned", n)
	}
}

// TestNoGradRestoresOnPanic: a panic inside NoGrad restores recording.
func TestNoGradRestoresOnPanic(t *testing.T) {
	func() {
		defer func() { _ = recover() }()
		NoGrad(func() { panic("boom") })
	}()
	if !Enabled() || offCount.Load() != 0 {
		t.Errorf("after a panic inside NoGrad: Enabled() = %v, %d goroutines off", Enabled(), offCount.Load())
	}
}

// TestRunRecordsNothing: closures run by Run see recording off, on Run's
// goroutine only, and the caller's mode comes back afterwards.
func TestRunRecordsNothing(t *testing.T) {
	var during bool
	leaf := NewLeaf("x")
	root := NewNode("F", "y", []*Node{leaf}, func() { during = Enabled() })
	Run(root)
	if during {
		t.Error("Enabled() = true inside a backward closure")
	}
	if !Enabled() {
		t.Error("Enabled() = false after Run")
	}
}

// TestConcurrentRunSameGraphDetected: a second goroutine that runs the
// backward pass through a graph that another goroutine is running panics
// with an *Error that says so; the first Run completes.
func TestConcurrentRunSameGraphDetected(t *testing.T) {
	leaf := NewLeaf("x")
	var root *Node
	var second any
	mid := NewNode("Mid", "m", []*Node{leaf}, nil)
	root = NewNode("Top", "y", []*Node{mid}, func() {
		done := make(chan any)
		go func() {
			defer func() { done <- recover() }()
			Run(root)
		}()
		second = <-done
	})
	Run(root)
	e, _ := second.(*Error)
	if e == nil || e.Op != "Backward" || !strings.Contains(e.Error(), "another goroutine") {
		t.Fatalf("second Run through a running graph: recovered %#v, want an *Error naming another goroutine", second)
	}
	if !root.Released() || !mid.Released() {
		t.Error("the first Run did not release its graph")
	}
}

func BenchmarkEnabled(b *testing.B) {
	b.Run("none-off", func(b *testing.B) {
		for range b.N {
			Enabled()
		}
	})
	b.Run("other-goroutine-off", func(b *testing.B) {
		release := make(chan struct{})
		started := make(chan struct{})
		go NoGrad(func() { close(started); <-release })
		<-started
		for range b.N {
			Enabled()
		}
		close(release)
	})
	b.Run("NoGrad", func(b *testing.B) {
		for range b.N {
			NoGrad(func() {})
		}
	})
}
