package autograd

import "sync/atomic"

var disabled atomic.Int64

// NoGrad runs f with recording switched off: operations inside f record no
// nodes and their results do not require a gradient. Calls nest. Grad mode is
// process-wide, so NoGrad should not race with recording on other goroutines.
func NoGrad(f func()) {
	disabled.Add(1)
	defer disabled.Add(-1)
	f()
}

// Enabled reports whether operations are being recorded.
func Enabled() bool { return disabled.Load() == 0 }
