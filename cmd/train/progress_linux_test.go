//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY returns the two ends of a new pseudo-terminal: the master, which
// reads what is written to the terminal, and the terminal itself.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal for the test: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Fatalf("unlocking the pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Fatalf("naming the pseudo-terminal: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatalf("opening the pseudo-terminal: %v", err)
	}
	return m, s
}

// TestProgressUnderLauncher runs train with its stdout on a pseudo-terminal,
// as Open MPI's mpirun gives each rank: alone, --progress=auto draws a bar;
// with a launcher's rank variable (a world of one rank here, which a build
// without -tags mpi runs) it prints plain log lines, unless --progress=bar
// is asked for.
func TestProgressUnderLauncher(t *testing.T) {
	bin := trainBinary(t)
	run := func(env []string, extra ...string) string {
		t.Helper()
		master, tty := openPTY(t)
		defer master.Close()
		cmd := exec.Command(bin, tinyArgs(t.TempDir(), append([]string{"--max_iters=6", "--eval_interval=3", "--num_samples=0"}, extra...)...)...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout = tty
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		var out bytes.Buffer
		done := make(chan struct{})
		go func() {
			io.Copy(&out, master) // ends with EIO once the process has closed the terminal
			close(done)
		}()
		err := cmd.Wait()
		<-done
		if err != nil {
			t.Fatalf("train %v: %v\n%s", env, err, stderr.String())
		}
		return out.String()
	}
	const erase = "\r\033[K" // the bar redraws its line
	if out := run(nil); !strings.Contains(out, erase) {
		t.Errorf("alone on a terminal, --progress=auto drew no bar:\n%q", out)
	}
	for _, env := range [][]string{
		{"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=1"},
		{"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=1"},
		{"PMI_RANK=0", "PMI_SIZE=1"},
	} {
		out := run(env)
		if strings.Contains(out, erase) || !strings.Contains(out, "iter 0: loss") || !strings.Contains(out, "iter 5: loss") {
			t.Errorf("under a launcher (%v), --progress=auto: want plain iter lines and no bar, got\n%q", env, out)
		}
		if out := run(env, "--progress=bar"); !strings.Contains(out, erase) {
			t.Errorf("under a launcher (%v), --progress=bar drew no bar:\n%q", env, out)
		}
	}
}
