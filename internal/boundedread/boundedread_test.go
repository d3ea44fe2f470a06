package boundedread

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(small, 2, "config.json"); err != nil || string(b) != "{}" {
		t.Fatalf("ReadFile at the limit = %q, %v", b, err)
	}
	// A sparse file: refused from its size, nothing read.
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadFile(big, 1<<20, "config.json")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "8 GiB, above the limit of 1 MiB for config.json") || !strings.Contains(err.Error(), big) {
		t.Fatalf("ReadFile of an 8 GiB file: %v", err)
	}
	// An endless device: read up to the limit, then refused.
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := ReadFile("/dev/zero", 1<<20, "encoder.json")
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "past the limit of 1 MiB for encoder.json") {
			t.Fatalf("ReadFile(/dev/zero): %v", err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 10, "x"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadFile of a missing file: %v", err)
	}
}

func TestReadAll(t *testing.T) {
	if b, err := ReadAll(strings.NewReader("abc"), 3); err != nil || string(b) != "abc" {
		t.Fatalf("ReadAll = %q, %v", b, err)
	}
	if _, err := ReadAll(strings.NewReader("abcd"), 3); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadAll past the limit: %v", err)
	}
}
