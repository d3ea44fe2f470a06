package cputime

import "testing"

// TestProcessAdvances checks that busy work shows up in Process.
func TestProcessAdvances(t *testing.T) {
	start := Process()
	if start == 0 {
		t.Skip("the process's CPU time is not read on this system")
	}
	x := 1.0
	for Process()-start < 20e6 { // 20 ms
		for range 1000 {
			x = x*1.0000001 + 1e-9
		}
	}
	if x <= 1 {
		t.Fatal("the busy loop did nothing")
	}
}
