//go:build !race

package blas

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
