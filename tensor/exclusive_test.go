package tensor

import "testing"

// exclusive marks t as a test that changes package state which the kernels
// read without synchronisation (the level of internal/kernels, which
// kernels.SetLevel switches, and layerNormFast, adamwFast, softmaxFast,
// arithFast, streamMinElems,
// causalBlockTest): such a test must not run in parallel with any other
// test, or the other's kernels would read the state as it changes. t.Setenv
// enforces that: it panics in a test that called t.Parallel or under a
// parallel parent. (Tests that only read the state may run in parallel
// with each other: Go runs parallel tests only after every sequential
// test of the package has finished or paused.)
func exclusive(t testing.TB) {
	t.Helper()
	t.Setenv("WICK_TEST_EXCLUSIVE", "1")
}

// TestExclusiveRefusesParallel checks exclusive's guard.
func TestExclusiveRefusesParallel(t *testing.T) {
	t.Run("parallel", func(t *testing.T) {
		t.Parallel()
		defer func() {
			if recover() == nil {
				t.Error("exclusive accepted a parallel test")
			}
		}()
		exclusive(t)
	})
}
