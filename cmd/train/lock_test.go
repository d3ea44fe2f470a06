//go:build linux

package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOutDirLock: a second run in the out_dir of a running one stops with
// one line naming the first one's pid and leaves its files alone; once the
// first is killed with SIGKILL, the next run takes the lock over.
func TestOutDirLock(t *testing.T) {
	bin := trainBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, tinyArgs(dir, "--max_iters=1000000", "--eval_interval=3", "--progress=plain")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.Contains(sc.Text(), ", saved ") { // a checkpoint to resume from
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	logBefore, err := os.ReadFile(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{tinyArgs(dir, "--max_iters=2"), {"--resume", "--out_dir=" + dir, "--max_iters=3"}} {
		out, errOut, code := runCLI(t, args...)
		want := "is in use by another training run (pid " + strconv.Itoa(cmd.Process.Pid) + ")"
		if code != 1 || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v while another run trains there: exit %d, stderr %q; want 1 and one line with %q\nstdout: %s", args, code, errOut, want, out)
		}
	}
	logAfter, err := os.ReadFile(filepath.Join(dir, "log.jsonl"))
	if err != nil || !strings.HasPrefix(string(logAfter), string(logBefore)) {
		t.Errorf("the running run's log.jsonl was changed by the refused run (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, prevLogName)); err == nil {
		t.Errorf("the refused run moved the log to %s", prevLogName)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// the killed run's lock is gone with it: the next run starts, keeping
	// the earlier log as log.prev.jsonl
	out := mustRun(t, tinyArgs(dir, "--max_iters=2", "--num_samples=0")...)
	if !strings.Contains(out, "moved it to "+filepath.Join(dir, prevLogName)) {
		t.Errorf("stdout does not say where the earlier log went:\n%s", out)
	}
	prev, err := os.ReadFile(filepath.Join(dir, prevLogName))
	if err != nil || !strings.HasPrefix(string(prev), string(logBefore)) {
		t.Errorf("%s does not hold the earlier run's log (%v)", prevLogName, err)
	}
	if recs := readLog(t, dir); len(recs) == 0 || recs[len(recs)-1].Iter != 2 {
		t.Errorf("the new log.jsonl does not hold the new run's records: %+v", recs)
	}
}
