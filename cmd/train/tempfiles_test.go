package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTempFileCleanup leaves in out_dir what a run killed while writing
// its checkpoint, log and pictures leaves (temporary files next to them),
// plus files that only look alike, and checks that a fresh run and a
// resumed one each delete the leftovers and keep the rest.
func TestTempFileCleanup(t *testing.T) {
	dir := t.TempDir()
	crash := func() (orphans, kept []string) {
		orphans = []string{".ckpt.safetensors.wick-tmp-2718281828", ".log.jsonl.wick-tmp-1", ".loss.png.wick-tmp-31415",
			".loss.svg.wick-tmp-27", ".sample.txt.wick-tmp-8", ".ckpt.safetensors.tmp-1234567"}
		kept = []string{"notes.txt", ".ckpt.safetensors.wick-tmp-draft", ".mine.wick-tmp-1", "ckpt.safetensors.tmp-5"}
		for _, n := range append(append([]string{}, orphans...), kept...) {
			writeFile(t, filepath.Join(dir, n), []byte(strings.Repeat("x", 1000)))
		}
		return orphans, kept
	}
	check := func(run string, orphans, kept []string, stdout string) {
		t.Helper()
		for _, n := range orphans {
			if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
				t.Errorf("%s run: orphan %s is still there", run, n)
			}
		}
		for _, n := range kept {
			if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
				t.Errorf("%s run removed %s: %v", run, n, err)
			}
		}
		if !strings.Contains(stdout, "removed 6 temporary file(s)") {
			t.Errorf("%s run: stdout does not report the removal:\n%s", run, stdout)
		}
	}
	orphans, kept := crash()
	check("fresh", orphans, kept, mustRun(t, tinyArgs(dir, "--max_iters=4", "--eval_interval=2")...))
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), "tmp-") && !strings.Contains(strings.Join(kept, " "), e.Name()) {
			t.Errorf("after a complete run %s is in out_dir", e.Name())
		}
	}
	orphans, kept = crash()
	check("resumed", orphans, kept, mustRun(t, "--resume", "--out_dir="+dir, "--max_iters=6"))
}
