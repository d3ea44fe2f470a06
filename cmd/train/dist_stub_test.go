//go:build !mpi

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestStartedAsRankWithoutMPI: a binary built without -tags mpi that a
// launcher starts as one of several ranks says how to build it, in one
// line, instead of training alone N times. It runs the built binary: the
// process joins its job once, so an in-process run would see the job of an
// earlier test.
func TestStartedAsRankWithoutMPI(t *testing.T) {
	cmd := exec.Command(trainBinary(t), tinyArgs(t.TempDir(), "--max_iters=1")...)
	cmd.Env = append(os.Environ(), "OMPI_COMM_WORLD_SIZE=2")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "-tags mpi") {
		t.Fatalf("err %v, stderr %q: want a non-zero exit and one line naming -tags mpi", err, stderr.String())
	}
}
