package backendtest

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/tensor"
)

// TestCPU runs the suite on the CPU backend, on the kernel path that
// internal/cpu chose (the best the machine has, or WICK_CPU's).
func TestCPU(t *testing.T) {
	b, err := tensor.BackendFor(tensor.CPU)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CPU kernel path %s (detected %s)", cpu.Use, cpu.Detected)
	Run(t, b)
}

// TestCPUPaths runs TestCPU again, with -short, in a child process for
// each lower kernel path the machine supports (WICK_CPU=purego, avx2): the
// path is fixed when the process starts.
func TestCPUPaths(t *testing.T) {
	if os.Getenv("WICK_CPU") != "" {
		t.Logf("WICK_CPU=%s: this process tests one path only", os.Getenv("WICK_CPU"))
		return
	}
	var paths []cpu.Level
	for l := cpu.Generic; l < cpu.Use; l++ {
		paths = append(paths, l)
	}
	if len(paths) == 0 {
		t.Logf("the machine runs the %s path only; TestCPU tested it", cpu.Use)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range paths {
		t.Run(l.String(), func(t *testing.T) {
			args := []string{"-test.run=^TestCPU$", "-test.short", "-test.count=1"}
			if *seedFlag != 0 {
				args = append(args, "-seed="+strconv.FormatUint(*seedFlag, 10))
			}
			cmd := exec.Command(exe, args...)
			cmd.Env = append(os.Environ(), "WICK_CPU="+l.String())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the suite with WICK_CPU=%s failed: %v\n%s", l, err, out)
			}
		})
	}
}
