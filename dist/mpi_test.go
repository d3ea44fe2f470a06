//go:build mpi

package dist

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wickml/wick/tensor"
)

// The tests here start this test binary again under mpirun, with
// $WICK_DIST_CHILD naming what the ranks run (TestMPIChild). mpirun must be
// on $PATH; .ci/run installs Open MPI where it is missing.

// TestMain leaves the MPI job when a test or benchmark joined one: mpirun
// counts a process that exits without MPI_Finalize as failed.
func TestMain(m *testing.M) {
	code := m.Run()
	worldMu.Lock()
	c := world
	worldMu.Unlock()
	if c != nil {
		if err := c.Finalize(); err != nil {
			println("dist: Finalize:", err.Error())
			code = 1
		}
	}
	os.Exit(code)
}

// mpirun runs this test binary under mpirun -np n with the child role, and
// returns its combined output, exit error and duration.
func mpirun(t *testing.T, n int, role string, limit time.Duration, env ...string) (string, error, time.Duration) {
	t.Helper()
	bin, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("the mpi tests need mpirun on $PATH (apt-get install openmpi-bin, or MPICH's mpich): %v", err)
	}
	args := []string{"-np", itoa(n)}
	vctx, vcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer vcancel()
	if v, _ := exec.CommandContext(vctx, bin, "--version").CombinedOutput(); bytes.Contains(v, []byte("Open MPI")) {
		args = append([]string{"--allow-run-as-root", "--oversubscribe"}, args...)
	}
	args = append(args, os.Args[0], "-test.run=^TestMPIChild$", "-test.v")
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(append(os.Environ(), "WICK_DIST_CHILD="+role, "WICK_DIST_NP="+itoa(n)), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	return string(out), err, time.Since(start)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestMPI runs the collective and data-parallel bodies on 2 MPI processes.
func TestMPI(t *testing.T) {
	out, err, _ := mpirun(t, 2, "bodies", 2*time.Minute)
	if err != nil || strings.Count(out, "--- PASS: TestMPIChild") != 2 {
		t.Fatalf("mpirun -np 2 (bodies): %v\n%s", err, out)
	}
}

// TestMPIRankDies kills one rank in the middle of a loop of collectives:
// the job must end, with a non-zero status, well within 30 s.
func TestMPIRankDies(t *testing.T) {
	out, err, d := mpirun(t, 2, "die", time.Minute)
	if strings.Count(out, "joined the job") != 2 {
		t.Fatalf("the ranks did not start:\n%s", out)
	}
	if err == nil {
		t.Fatalf("mpirun with a rank that dies exited 0:\n%s", out)
	}
	if d > 30*time.Second {
		t.Fatalf("mpirun with a rank that dies took %v, want < 30s:\n%s", d, out)
	}
}

// TestMPITimeout stops one rank from calling collectives without dying:
// the other's collective returns the timeout error after
// $WICK_DIST_TIMEOUT, and its Abort ends the job.
func TestMPITimeout(t *testing.T) {
	out, err, d := mpirun(t, 2, "stall", time.Minute, "WICK_DIST_TIMEOUT=2s")
	if strings.Count(out, "joined the job") != 2 {
		t.Fatalf("the ranks did not start:\n%s", out)
	}
	if err == nil || !strings.Contains(out, "waited 2s for the other ranks") {
		t.Fatalf("mpirun with a stalled rank: %v, want a non-zero exit after the timeout error:\n%s", err, out)
	}
	if d > 30*time.Second {
		t.Fatalf("mpirun with a stalled rank took %v, want < 30s", d)
	}
}

// childRoles are the roles of TestMPIChild defined in other files (the
// NCCL tests, under -tags cuda,mpi).
var childRoles = map[string]func(t *testing.T, c *Comm){}

// TestMPIChild is what each rank runs under mpirun; alone it does nothing.
func TestMPIChild(t *testing.T) {
	role := os.Getenv("WICK_DIST_CHILD")
	if role == "" {
		return // not started by mpirun: nothing to check here
	}
	c, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	np, _ := strconv.Atoi(os.Getenv("WICK_DIST_NP"))
	if c.WorldSize() != np || c.LocalRank() != c.Rank() || !strings.HasPrefix(c.Backend(), "mpi (") {
		t.Fatalf("Init under mpirun -np %d on one node: rank %d local %d of %d over %q", np, c.Rank(), c.LocalRank(), c.WorldSize(), c.Backend())
	}
	fmt.Printf("rank %d of %d joined the job\n", c.Rank(), c.WorldSize())
	switch role {
	case "bodies":
		for _, b := range bodies {
			b.f(t, c)
		}
	case "die":
		x := tensor.Ones(1000)
		for i := 0; ; i++ {
			if c.Rank() == 1 && i == 20 {
				p, _ := os.FindProcess(os.Getpid())
				p.Kill() // SIGKILL: no goodbye to MPI
			}
			if err := c.AllReduce(x, Mean); err != nil {
				t.Logf("rank %d: %v", c.Rank(), err)
				c.Abort(1)
			}
		}
	case "stall":
		if c.Rank() == 1 {
			time.Sleep(time.Hour)
		}
		err := c.Barrier()
		t.Logf("rank %d: %v", c.Rank(), err)
		c.Abort(3)
	default:
		f, ok := childRoles[role]
		if !ok {
			t.Fatalf("no role %q", role)
		}
		f(t, c)
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
}
