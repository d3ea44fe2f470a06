//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitBlocked waits until one of the threads of process pid sleeps in the
// kernel waiting for a FIFO's writer or in a pipe read (its wchan), so
// that a signal reaches it in the middle of the read. Where the kernel
// does not show wchan it gives up after 3 s: the signal then comes a
// little earlier or later, which the command must handle all the same.
func waitBlocked(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	var seen []string
	for time.Now().Before(deadline) {
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
		seen = seen[:0]
		for _, w := range tasks {
			b, _ := os.ReadFile(w)
			s := string(b)
			seen = append(seen, s)
			// opening a FIFO without a writer, or a read of a pipe (Go
			// waits for a pollable one in epoll)
			if strings.Contains(s, "partner") || strings.Contains(s, "pipe") || strings.Contains(s, "fifo") || strings.Contains(s, "epoll") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("no thread of %d seen blocked in a FIFO or pipe read (wchan %q); signalling anyway", pid, seen)
}

// mkfifo makes a FIFO at path.
func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSignalBlockedRead starts the built binary on inputs whose read
// blocks — a FIFO nobody writes, a pipe that stays open without data (as
// bash's <(sleep 30)) — as the corpus, the checkpoint, a pretrained
// model's config.json, a config file and a --start=FILE: prompt, and checks
// that the first SIGINT or SIGTERM stops it within a second with the
// documented status and one line naming what was being read.
func TestSignalBlockedRead(t *testing.T) {
	bin := trainBinary(t)
	tmp := t.TempDir()
	good := filepath.Join(tmp, "good")
	mustRun(t, tinyArgs(good, "--max_iters=2", "--num_samples=0")...)
	ckptFIFO := filepath.Join(tmp, "fifockpt")
	os.MkdirAll(ckptFIFO, 0o755)
	mkfifo(t, filepath.Join(ckptFIFO, ckptName))
	hub := filepath.Join(tmp, "hub")
	writeHubModel(t, hub, testVocab, 32, true)
	os.Remove(filepath.Join(hub, "config.json"))
	mkfifo(t, filepath.Join(hub, "config.json"))

	type tc struct {
		name string
		args func(fifo string) []string
		want string // what the line says was stopped
	}
	cases := []tc{
		{"data", func(f string) []string { return tinyArgs(filepath.Join(tmp, "out"), "--data="+f) }, "reading the corpus stopped"},
		{"checkpoint resume", func(string) []string { return []string{"--resume", "--out_dir=" + ckptFIFO} }, "reading the checkpoint stopped"},
		{"checkpoint sample", func(string) []string { return []string{"sample", "--out_dir=" + ckptFIFO} }, "reading the checkpoint stopped"},
		{"config.json", func(string) []string { return []string{"sample", "--init_from=" + hub} }, "reading --init_from stopped"},
		{"config file", func(f string) []string { return []string{f} }, "reading the config file stopped"},
		{"start sample", func(f string) []string { return []string{"sample", "--out_dir=" + good, "--start=FILE:" + f} }, "reading --start=FILE: stopped"},
		{"start train", func(f string) []string { return tinyArgs(filepath.Join(tmp, "out"), "--start=FILE:"+f) }, "reading --start=FILE: stopped"},
	}
	n := 0
	for _, c := range cases {
		for _, pipe := range []bool{false, true} {
			for _, sig := range stopSignals {
				name := c.name + "/fifo/" + sig.String()
				if pipe {
					name = c.name + "/pipe/" + sig.String()
					if c.name != "data" && c.name != "start sample" && c.name != "config file" {
						continue // the files in a directory can only be FIFOs
					}
				}
				n++
				t.Run(name, func(t *testing.T) {
					fifo := mkfifo(t, filepath.Join(t.TempDir(), "fifo"))
					cmd := exec.Command(bin, c.args(fifo)...)
					var stdout, stderr bytes.Buffer
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					if pipe {
						// an open pipe without data: bash's <(sleep 30)
						r, w, err := os.Pipe()
						if err != nil {
							t.Fatal(err)
						}
						defer w.Close()
						defer r.Close()
						cmd.ExtraFiles = []*os.File{r}
						cmd.Args = exec.Command(bin, c.args("/dev/fd/3")...).Args
					}
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					waitBlocked(t, cmd.Process.Pid)
					code, took := stopWith(t, cmd, sig)
					checkStopped(t, sig, code, took, stderr.String(), stdout.String())
					if want := "train: " + c.want + ": " + sigWords[sig]; !strings.Contains(stderr.String(), want) {
						t.Errorf("stderr %q, want %q", stderr.String(), want)
					}
				})
			}
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "out")); err == nil {
		t.Errorf("an interrupted read created out_dir")
	}
}

// TestPromptFileLimit: --start=FILE: of /dev/zero or of a 111 MB file
// stops with one line naming the limit, having read only a few MiB.
func TestPromptFileLimit(t *testing.T) {
	bin := trainBinary(t)
	tmp := t.TempDir()
	good := filepath.Join(tmp, "good")
	mustRun(t, tinyArgs(good, "--max_iters=2", "--num_samples=0")...)
	big := filepath.Join(tmp, "big.txt")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(111e6); err != nil { // sparse: nothing on disk
		t.Fatal(err)
	}
	f.Close()
	for _, path := range []string{"/dev/zero", big} {
		for _, args := range [][]string{
			{"sample", "--out_dir=" + good, "--start=FILE:" + path},
			tinyArgs(filepath.Join(tmp, "out"), "--prompt=FILE:"+path),
		} {
			cmd := exec.Command(bin, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("%v: exit %d (%v), want 1", args, code, err)
			}
			if want := "longer than 4 MiB"; !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("%v: stderr %q, want one line saying %q", args, stderr.String(), want)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
			t.Logf("%s: peak RSS %d MiB", path, rss>>10)
			if rss > 200<<10 {
				t.Errorf("%v: peak RSS %d MiB, want under 200", args, rss>>10)
			}
		}
	}
}
