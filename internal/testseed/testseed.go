// Package testseed gives tests their random seeds: fixed by default, so
// that every run of a test draws the same inputs and a failure repeats,
// and chosen by the environment variable WICK_TEST_SEED for exploration:
//
//	WICK_TEST_SEED=random go test ./tensor/   # a fresh seed, printed
//	WICK_TEST_SEED=12345 go test ./tensor/    # replay that seed
//
// Every test that draws from it logs the seed it used (t.Logf, shown with
// -v and on failure); with WICK_TEST_SEED=random the drawn seed is also
// printed once to stderr. It is for tests only.
package testseed

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// EnvVar is the environment variable that chooses the seeds.
const EnvVar = "WICK_TEST_SEED"

var random = sync.OnceValue(func() uint64 {
	s := uint64(time.Now().UnixNano())
	fmt.Fprintf(os.Stderr, "testseed: %s=random drew seed %d (replay with %s=%d)\n", EnvVar, s, EnvVar, s)
	return s
})

// Value returns the seed for a test whose fixed seed is fixed: fixed when
// WICK_TEST_SEED is unset or empty, its number when it holds one, one
// seed drawn from the clock per process when it is "random". It panics on
// any other value.
func Value(fixed uint64) uint64 {
	switch s := os.Getenv(EnvVar); s {
	case "":
		return fixed
	case "random":
		return random()
	default:
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			panic(fmt.Sprintf("testseed: %s=%q: want a number or \"random\"", EnvVar, s))
		}
		return v
	}
}

// Seed is Value, logged on t with how to replay it.
func Seed(t testing.TB, fixed uint64) uint64 {
	t.Helper()
	s := Value(fixed)
	t.Logf("seed %d (replay with %s=%d)", s, EnvVar, s)
	return s
}
