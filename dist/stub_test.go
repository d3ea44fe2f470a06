//go:build !mpi

package dist

import (
	"strings"
	"testing"
)

func TestInitWithoutMPI(t *testing.T) {
	for _, name := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"} {
		t.Run(name, func(t *testing.T) {
			for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"} {
				t.Setenv(v, "")
			}
			t.Setenv(name, "4")
			if _, err := initWorld(); err == nil || !strings.Contains(err.Error(), "-tags mpi") || !strings.Contains(err.Error(), name) {
				t.Fatalf("initWorld with $%s=4: %v, want an error naming the variable and the tag", name, err)
			}
			t.Setenv(name, "1")
			c, err := initWorld()
			if err != nil || c.Rank() != 0 || c.WorldSize() != 1 || c.LocalRank() != 0 {
				t.Fatalf("initWorld with $%s=1: %+v, %v; want rank 0 of 1", name, c, err)
			}
		})
	}
}
