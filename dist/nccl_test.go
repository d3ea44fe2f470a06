//go:build cuda && mpi

package dist

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/tensor"
)

// The NCCL tests run on a GPU: a real one with NCCL, or the emulated
// device with the stand-in NCCL of scripts/kernel_emu/nccl.cpp
// (scripts/nccl_emu.sh). Without a GPU they skip, unless
// WICK_REQUIRE_GPU=1 makes that a failure.

func init() {
	childRoles["nccl"] = ncclChild
	childRoles["nccl-missing"] = ncclMissingChild
}

func needGPU(t *testing.T) {
	t.Helper()
	if cuda.DeviceCount() == 0 {
		if os.Getenv("WICK_REQUIRE_GPU") == "1" {
			t.Fatal("no GPU (WICK_REQUIRE_GPU=1: a missing GPU fails the test)")
		}
		t.Skip("no GPU: the NCCL tests need one (scripts/nccl_emu.sh runs them on the emulated device)")
	}
}

// TestMPINCCL runs the collective and data-parallel bodies on 2 ranks with
// every tensor on the rank's GPU: NCCL reduces them. On a machine with one
// GPU it runs one rank (NCCL refuses two ranks on one GPU), except on the
// emulated device, which the ranks do not share.
func TestMPINCCL(t *testing.T) {
	needGPU(t)
	np := min(2, cuda.DeviceCount())
	if name, _ := cuda.DeviceName(0); strings.Contains(name, "emulated") {
		np = 2
	}
	out, err, _ := mpirun(t, np, "nccl", 90*time.Second)
	if err != nil || strings.Count(out, "--- PASS: TestMPIChild") != np || !strings.Contains(out, "rank 0: GPU collectives over nccl ") {
		t.Fatalf("mpirun -np %d (nccl): %v\n%s", np, err, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "GPU collectives over") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// TestMPINCCLMissing checks the error when NCCL cannot be loaded: every
// rank's first collective on a GPU tensor fails, naming what was tried.
func TestMPINCCLMissing(t *testing.T) {
	needGPU(t)
	out, err, _ := mpirun(t, 2, "nccl-missing", time.Minute)
	if err != nil || strings.Count(out, "--- PASS: TestMPIChild") != 2 {
		t.Fatalf("mpirun -np 2 (nccl-missing): %v\n%s", err, out)
	}
}

// rankGPU makes the rank's GPU (local rank mod the GPU count) the default
// device.
func rankGPU(t *testing.T, c *Comm) tensor.Device {
	dev := tensor.CUDA(c.LocalRank() % cuda.DeviceCount())
	if err := tensor.SetDefaultDevice(dev); err != nil {
		t.Fatal(err)
	}
	return dev
}

func ncclChild(t *testing.T, c *Comm) {
	dev := rankGPU(t, c)
	defer tensor.SetDefaultDevice(tensor.CPU)
	for _, b := range bodies {
		b.f(t, c)
	}
	got := c.DeviceBackend()
	if !strings.HasPrefix(got, "nccl 2.") {
		t.Fatalf("rank %d: DeviceBackend %q after collectives on %s, want nccl", c.Rank(), got, dev)
	}
	t.Logf("rank %d: GPU collectives over %s on %s", c.Rank(), got, dev)
}

func ncclMissingChild(t *testing.T, c *Comm) {
	rankGPU(t, c)
	defer tensor.SetDefaultDevice(tensor.CPU)
	ncclSearch = func() []string { return []string{"/nonexistent/libnccl.so.2", "libwick-no-such-nccl.so.2"} }
	err := c.AllReduce(tensor.Ones(4), Sum)
	for _, want := range []string{"cannot load NCCL", "/nonexistent/libnccl.so.2", "libwick-no-such-nccl.so.2", "WICK_NCCL", "WICK_DIST_NCCL=0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("rank %d: AllReduce on a GPU without NCCL: %v, want an error saying %q", c.Rank(), err, want)
		}
	}
	t.Logf("rank %d: %v", c.Rank(), err)
	// The Comm still works for host tensors.
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
}
