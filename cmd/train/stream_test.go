//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDataStream trains on --data given a FIFO and given /dev/fd/3, the
// read end of a pipe (what bash's <(command) passes), and checks that the
// run sees the whole corpus.
func TestDataStream(t *testing.T) {
	bin := trainBinary(t)
	text, err := os.ReadFile("testdata/tiny.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := "data: %s: 2925 train and 326 val tokens"
	feed := func(w *os.File) {
		w.Write(text)
		w.Close()
	}
	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "corpus")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, tinyArgs(t.TempDir(), "--data="+fifo, "--max_iters=2", "--num_samples=0")...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		fed := make(chan struct{})
		go func() {
			defer close(fed)
			if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil { // blocks until a reader opens it
				feed(w)
			}
		}()
		err := cmd.Wait()
		if r, oerr := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); oerr == nil {
			r.Close() // lets the writer go if train never opened the FIFO
		}
		<-fed
		if err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
		if !strings.Contains(stdout.String(), strings.Replace(want, "%s", fifo, 1)) {
			t.Errorf("stdout:\n%s\nwant %q", stdout.String(), want)
		}
	})
	t.Run("dev-fd", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, tinyArgs(t.TempDir(), "--data=/dev/fd/3", "--max_iters=2", "--num_samples=0")...)
		cmd.ExtraFiles = []*os.File{r}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		feed(w)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
		if !strings.Contains(stdout.String(), strings.Replace(want, "%s", "/dev/fd/3", 1)) {
			t.Errorf("stdout:\n%s\nwant %q", stdout.String(), want)
		}
	})
}
