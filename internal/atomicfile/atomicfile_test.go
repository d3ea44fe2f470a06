package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wickml/wick/internal/atomicfile"
)

func TestWriteFileKeepsOldFileOnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := atomicfile.WriteFile(path, func(w io.Writer) error { _, err := w.Write([]byte("old")); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := atomicfile.WriteFile(path, func(w io.Writer) error {
		w.Write([]byte("partial new contents"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("file holds %q after a failed write, want the old contents", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the directory, want 1 (temporary file left behind?)", len(entries))
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "no", "such", "dir"), func(io.Writer) error { return nil }); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

// TestRemoveTempFiles leaves the temporary file of a WriteFile that
// never reached its rename (as a killed process would), among files that
// only look alike, and checks that RemoveTempFiles deletes the leftovers of
// the names it is given and nothing else.
func TestRemoveTempFiles(t *testing.T) {
	dir := t.TempDir()
	var tmpName string
	stop := errors.New("killed")
	atomicfile.WriteFile(filepath.Join(dir, "ckpt.safetensors"), func(w io.Writer) error {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			tmpName = e.Name()
		}
		return stop
	})
	if tmpName == "" {
		t.Fatal("WriteFile made no temporary file")
	}
	orphans := []string{tmpName, ".ckpt.safetensors.wick-tmp-1", ".log.jsonl.wick-tmp-42", ".ckpt.safetensors.tmp-123456"}
	kept := []string{"ckpt.safetensors", "notes.txt", ".ckpt.safetensors.wick-tmp-", ".ckpt.safetensors.wick-tmp-12x",
		"ckpt.safetensors.wick-tmp-7", ".other.wick-tmp-7", ".other.tmp-7", ".log.jsonl.tmp-", "x.ckpt.safetensors.tmp-9"}
	for _, n := range append(slices.Clone(orphans), kept...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("12345"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".ckpt.safetensors.wick-tmp-99"), 0o755); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, ".ckpt.safetensors.wick-tmp-99")
	removed, size, err := atomicfile.RemoveTempFiles(dir, []string{"ckpt.safetensors", "log.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != len(orphans) || size != int64(5*len(orphans)) {
		t.Errorf("removed %v (%d bytes), want the %d orphans %v", removed, size, len(orphans), orphans)
	}
	for _, n := range orphans {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s is still there", n)
		}
	}
	for _, n := range kept {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
	if _, _, err := atomicfile.RemoveTempFiles(filepath.Join(dir, "missing"), []string{"x"}); err == nil {
		t.Error("no error for a missing directory")
	}
}
