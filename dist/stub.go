//go:build !mpi

// Keep in sync with mpi.go: both define initWorld and Transports.

package dist

import "fmt"

// Transports says which ways of reaching other processes this binary was
// built with.
const Transports = "none (built without -tags mpi)"

// initWorld returns a world of one process, or an error naming the build
// tag when the launcher started several.
func initWorld() (*Comm, error) {
	if n, name := launcherSize(); n > 1 {
		return nil, fmt.Errorf("dist: $%s=%d says this process is one of %d ranks, but this binary was built without MPI: rebuild it with -tags mpi (needs libopenmpi-dev or libmpich-dev)", name, n, n)
	}
	return newSingle(), nil
}
