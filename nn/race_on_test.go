//go:build race

package nn_test

// raceEnabled reports whether the tests run under the race detector, whose
// shadow memory makes resident-memory measurements meaningless.
const raceEnabled = true
