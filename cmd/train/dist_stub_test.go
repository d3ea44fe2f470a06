//go:build !mpi

package main

import (
	"strings"
	"testing"
)

// TestStartedAsRankWithoutMPI: a binary built without -tags mpi that a
// launcher starts as one of several ranks says how to build it, in one
// line, instead of training alone N times.
func TestStartedAsRankWithoutMPI(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	_, stderr, code := runCLI(t, tinyArgs(t.TempDir(), "--max_iters=1")...)
	if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "-tags mpi") {
		t.Fatalf("exit %d, stderr %q: want one line naming -tags mpi", code, stderr)
	}
}
