package tensor

import (
	"strings"
	"sync"
	"testing"

	"github.com/wickml/wick/autograd"
)

// TestConcurrentGraphs is the program of a user who records and
// backpropagates small graphs on several goroutines with no NoGrad of their
// own: every iteration must keep its graph and get the right gradient, while
// the library's reductions and Backward run on the other goroutines.
func TestConcurrentGraphs(t *testing.T) {
	const goroutines, iters = 4, 10000
	var wg sync.WaitGroup
	var fails, wrong [goroutines]int
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range iters {
				w := Ones(3).RequiresGrad()
				l := w.Mul(w).Mean()
				if !l.IsRequiringGrad() {
					fails[g]++
					continue
				}
				l.Backward()
				for _, v := range w.Grad().Float32s() { // d/dw mean(w²) = 2w/3
					if v != float32(2)/3 {
						wrong[g]++
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	for g := range goroutines {
		if fails[g] != 0 || wrong[g] != 0 {
			t.Errorf("goroutine %d: %d of %d iterations lost their graph, %d got a wrong gradient", g, fails[g], iters, wrong[g])
		}
	}
}

// TestConcurrentNoGradDoesNotLeak: a goroutine inside NoGrad does not stop
// another goroutine from recording.
func TestConcurrentNoGradDoesNotLeak(t *testing.T) {
	inside, release := make(chan struct{}), make(chan struct{})
	notRecorded := make(chan bool)
	go autograd.NoGrad(func() {
		x := Ones(2).RequiresGrad()
		close(inside)
		<-release
		notRecorded <- !x.MulScalar(2).IsRequiringGrad()
	})
	<-inside
	x := Ones(2).RequiresGrad()
	y := x.MulScalar(2).Sum()
	if !y.IsRequiringGrad() {
		t.Error("an operation was not recorded while another goroutine was inside NoGrad")
	} else {
		y.Backward()
		if got := x.Grad().Float32s(); got[0] != 2 || got[1] != 2 {
			t.Errorf("gradient %v, want [2 2]", got)
		}
	}
	close(release)
	if !<-notRecorded {
		t.Error("an operation inside NoGrad was recorded")
	}
}

// TestLibraryComputesWithoutRecording: Backward, Mean and CrossEntropy
// leave the calling goroutine's grad mode as it was and record only their
// own node.
func TestLibraryComputesWithoutRecording(t *testing.T) {
	x := Randn(3, 4).RequiresGrad()
	loss := CrossEntropy(x.MulScalar(2), FromInts([]int{0, 1, 3}, 3))
	if n := len(loss.GradFn().Inputs); n != 1 || loss.GradFn().Inputs[0].Op != "MulScalar" {
		t.Errorf("CrossEntropy's node has inputs %v, want only MulScalar", loss.GradFn().Inputs)
	}
	m := x.Mean()
	if m.GradFn().Op != "Mean" || m.GradFn().Inputs[0] != x.Node() {
		t.Errorf("Mean recorded %s over %v, want one Mean node over the leaf", m.GradFn().Op, m.GradFn().Inputs)
	}
	loss.Backward()
	if !autograd.Enabled() {
		t.Error("recording is off after Backward")
	}
}

// TestConcurrentLeafAccumulationDetected: Backward into a leaf whose
// gradient another goroutine is accumulating panics with an *Error instead
// of losing one of the two gradients.
func TestConcurrentLeafAccumulationDetected(t *testing.T) {
	w := Ones(3).RequiresGrad()
	l := w.MulScalar(3).Sum()
	w.accumulating.Store(true) // as if another Backward were adding into w.Grad now
	err := Catch(l.Backward)
	w.accumulating.Store(false)
	if err == nil || !strings.Contains(err.Error(), "same leaf") {
		t.Fatalf("Backward while another goroutine accumulates into the leaf: err = %v, want an *Error about the same leaf", err)
	}
	// Without the other goroutine, a fresh graph works.
	w.MulScalar(3).Sum().Backward()
	if got := w.Grad().Float32s(); got[0] != 3 {
		t.Errorf("gradient %v after the detected conflict, want [3 3 3]", got)
	}
}
