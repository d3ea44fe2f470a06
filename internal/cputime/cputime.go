// Package cputime reads the CPU time the process has used, for benchmarks
// that report it beside wall time: on a shared machine other processes
// disturb the CPU time of a single-threaded loop much less than its wall
// time. Only tests and benchmarks import it.
package cputime

import (
	"testing"
	"time"
)

// ReportPerOp reports the CPU time used since start, divided by b.N, as
// b's metric cpu-ns/op.
func ReportPerOp(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(Process()-start)/float64(b.N), "cpu-ns/op")
}
