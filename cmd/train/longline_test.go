//go:build linux

package main

import (
	"bytes"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestBPELongLineMemory trains a bpe tokenizer (and one step of a model)
// on a 6 MB line without whitespace with the built binary, and checks
// that its peak memory stays under 200 MB: the pre-tokenizer cuts the
// line into bounded chunks (tokenizer.MaxBPEChunk), where it used to take
// about 30 bytes per byte of the line (about 290 MB here).
func TestBPELongLineMemory(t *testing.T) {
	bin := trainBinary(t)
	r := rand.New(rand.NewPCG(8, 9))
	line := make([]byte, 6<<20)
	for i := range line {
		line[i] = "abcdefgh"[r.IntN(8)]
	}
	tmp := t.TempDir()
	corpus := writeFile(t, filepath.Join(tmp, "line.txt"), append(line, '\n'))
	cmd := exec.Command(bin, tinyArgs(filepath.Join(tmp, "out"), "--data="+corpus, "--tokenizer=bpe", "--vocab_size=300",
		"--max_iters=1", "--eval_iters=1", "--num_samples=0")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("train: %v: %s", err, stderr.String())
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss >> 10 // MiB
	t.Logf("peak RSS %d MiB", rss)
	if rss > 200 {
		t.Errorf("peak RSS %d MiB on a 6 MB line, want under 200", rss)
	}
	if strings.Contains(stderr.String(), "panic") {
		t.Errorf("stderr: %s", stderr.String())
	}
}
