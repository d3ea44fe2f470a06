//go:build unix

package data

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenStream reads the corpus from a FIFO, whose size Open cannot
// know in advance, and from a device that yields NUL bytes for ever.
func TestOpenStream(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat(sampleText, 3000) // larger than a pipe's buffer
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.WriteString(text)
		f.Close()
	}()
	c, err := Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Text) != text {
		t.Errorf("read %d bytes from the FIFO, want %d", len(c.Text), len(text))
	}
	c.Close()
	if _, err := Open("/dev/zero"); err == nil || !strings.Contains(err.Error(), "NUL byte at offset 0") {
		t.Errorf("/dev/zero: %v", err)
	}
}
