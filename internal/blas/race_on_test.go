//go:build race

package blas

// raceEnabled reports whether the tests run under the race detector, under
// which sync.Pool drops a share of what is put back on purpose.
const raceEnabled = true
