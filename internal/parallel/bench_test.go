package parallel

import (
	"sync/atomic"
	"testing"
)

// BenchmarkForOverhead measures one For call whose ranges do nothing: the
// cost of waking the pool and waiting for it.
func BenchmarkForOverhead(b *testing.B) {
	var sink atomic.Int64
	for b.Loop() {
		For(64, 1, func(lo, hi int) { sink.Add(int64(hi - lo)) })
	}
}

// BenchmarkGoroutinesOverhead is the same loop with a goroutine per range,
// the pattern the pool replaces.
func BenchmarkGoroutinesOverhead(b *testing.B) {
	var sink atomic.Int64
	for b.Loop() {
		done := make(chan struct{})
		parts := Workers()
		for p := range parts {
			go func() {
				sink.Add(int64(p))
				done <- struct{}{}
			}()
		}
		for range parts {
			<-done
		}
	}
}
