package main

import (
	"math"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3} // unsorted on purpose
	for _, c := range []struct{ p, want float64 }{{0, 1}, {50, 3}, {100, 5}, {25, 2}, {99, 4.96}, {10, 1.4}} {
		if got := percentile(xs, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("percentile(%v, %v) = %v, want %v", xs, c.p, got, c.want)
		}
	}
	if xs[0] != 5 {
		t.Errorf("percentile sorted its argument: %v", xs)
	}
	if got := percentile([]float64{7}, 99); got != 7 {
		t.Errorf("percentile of one value = %v, want 7", got)
	}
	if got := percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("percentile of none = %v, want NaN", got)
	}
	if got := maxOf([]float64{2, 9, 3}); got != 9 {
		t.Errorf("maxOf = %v, want 9", got)
	}
}

func TestSummarize(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(msec ...int) []time.Time {
		var ts []time.Time
		for _, m := range msec {
			ts = append(ts, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return ts
	}
	all := []stream{
		{start: t0, chunks: at(10, 20, 30), tokens: 3},
		{start: t0, chunks: at(30, 50), tokens: 2},
		{start: t0, chunks: at(5), hungUp: true},
		{start: t0, err: errTest},
	}
	r := summarize(all, 2, 2*time.Second)
	if r.Requests != 2 || r.HungUp != 1 || r.Errors != 1 || r.FirstError != "test" {
		t.Fatalf("counts: %+v", r)
	}
	if r.TokensPerSec != 2.5 || r.RequestsPerSec != 1 {
		t.Errorf("rates: %v tok/s %v req/s, want 2.5 and 1", r.TokensPerSec, r.RequestsPerSec)
	}
	// TTFTs 10, 30, 5 ms; gaps 10, 10, 20 ms
	if r.TTFTp50 != 10 || r.ITLp50 != 10 || math.Abs(r.ITLp99-19.8) > 1e-9 {
		t.Errorf("latencies: %+v", r)
	}
}

type testError struct{}

func (testError) Error() string { return "test" }

var errTest = testError{}
