//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the CPU time process pid has used, from /proc.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	// After the command name: state is field 3, utime 14 and stime 15.
	ut, err1 := strconv.Atoi(f[11])
	st, err2 := strconv.Atoi(f[12])
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cannot parse /proc/%d/stat", pid)
	}
	return time.Duration(ut+st) * time.Second / 100, nil // USER_HZ is 100 on Linux
}

// waitBusy waits until cmd's process has used d of CPU time, so that it is
// well into its work (past start-up and checkpoint loading).
func waitBusy(t *testing.T, cmd *exec.Cmd, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		used, err := cpuTime(cmd.Process.Pid)
		if err != nil {
			t.Fatalf("process state: %v", err)
		}
		if used >= d {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the process did not use %v of CPU in a minute", d)
}

// stopWith sends sig to cmd's process and waits for it to exit, killing
// it after 20 s. It returns the exit status and the time from the signal
// to the exit.
func stopWith(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) (int, time.Duration) {
	t.Helper()
	done := make(chan struct{})
	t0 := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	go func() {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	}()
	cmd.Wait()
	took := time.Since(t0)
	close(done)
	return cmd.ProcessState.ExitCode(), took
}

// checkStopped checks what every signalled command must do: exit with
// 128+sig within a second, with at most one line on stderr and no stack
// trace.
func checkStopped(t *testing.T, sig syscall.Signal, code int, took time.Duration, stderr, stdout string) {
	t.Helper()
	t.Logf("exit status %d, %v after %v", code, took.Round(time.Millisecond), sig)
	if want := 128 + int(sig); code != want {
		t.Errorf("exit status %d after %v, want %d", code, sig, want)
	}
	if took > time.Second {
		t.Errorf("exited %v after %v, want within 1s", took, sig)
	}
	if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") || strings.Count(stderr, "\n") > 1 {
		t.Errorf("stderr is not one line:\n%s", stderr)
	}
	if t.Failed() {
		t.Logf("stdout:\n%s", stdout)
	}
}

var stopSignals = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}

// sigWords is what the one stderr line says about each signal.
var sigWords = map[syscall.Signal]string{syscall.SIGINT: "interrupted (SIGINT)", syscall.SIGTERM: "terminated (SIGTERM)"}

// TestSignalSample stops `train sample` in the middle of generating
// ten million tokens.
func TestSignalSample(t *testing.T) {
	bin := trainBinary(t)
	dir := t.TempDir()
	mustRun(t, tinyArgs(dir, "--max_iters=2", "--num_samples=0")...)
	for _, sig := range stopSignals {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "sample", "--out_dir="+dir, "--num_samples=4", "--max_new_tokens=10000000")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitBusy(t, cmd, 300*time.Millisecond)
			code, took := stopWith(t, cmd, sig)
			checkStopped(t, sig, code, took, stderr.String(), stdout.String())
			if want := "train: text generation stopped: " + sigWords[sig]; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr %q, want %q", stderr.String(), want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

// TestSignalFinalSample stops a training run while it generates the sample
// printed at the end; its checkpoint stays.
func TestSignalFinalSample(t *testing.T) {
	bin := trainBinary(t)
	for _, sig := range stopSignals {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(bin, tinyArgs(dir, "--max_iters=2", "--eval_interval=1", "--max_new_tokens=10000000", "--progress=plain")...)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var stdout strings.Builder
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				stdout.WriteString(sc.Text() + "\n")
				if strings.HasPrefix(sc.Text(), "done: ") {
					break
				}
			}
			waitBusy(t, cmd, 300*time.Millisecond)
			code, took := stopWith(t, cmd, sig)
			rest, _ := io.ReadAll(out)
			stdout.Write(rest)
			checkStopped(t, sig, code, took, stderr.String(), stdout.String())
			if !strings.Contains(stdout.String(), "done: ") || strings.Contains(stdout.String(), "sample (") {
				t.Errorf("want the summary and no sample in stdout:\n%s", stdout.String())
			}
			if want := "train: text generation stopped: " + sigWords[sig]; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr %q, want %q", stderr.String(), want)
			}
			if _, _, err := readCheckpoint(filepath.Join(dir, ckptName)); err != nil {
				t.Errorf("checkpoint: %v", err)
			}
		})
	}
}

// TestSignalTokenizerTraining stops the training of a 65536-token BPE on
// 2 MB of random words, which takes seconds.
func TestSignalTokenizerTraining(t *testing.T) {
	bin := trainBinary(t)
	r := rand.New(rand.NewPCG(5, 6))
	var text bytes.Buffer
	for text.Len() < 2<<20 {
		sep := byte(' ')
		if r.IntN(12) == 0 {
			sep = '\n'
		}
		text.WriteByte(sep)
		for range 2 + r.IntN(12) {
			text.WriteByte(byte('a' + r.IntN(26)))
		}
	}
	corpus := writeFile(t, filepath.Join(t.TempDir(), "words.txt"), text.Bytes())
	for _, sig := range stopSignals {
		t.Run(sig.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			args := tinyArgs(dir, "--data="+corpus, "--tokenizer=bpe", "--vocab_size=65536")
			cmd := exec.Command(bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitBusy(t, cmd, 300*time.Millisecond)
			code, took := stopWith(t, cmd, sig)
			checkStopped(t, sig, code, took, stderr.String(), stdout.String())
			if want := "train: bpe tokenizer training stopped: " + sigWords[sig]; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr %q, want %q", stderr.String(), want)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("out_dir was created")
			}
		})
	}
}
