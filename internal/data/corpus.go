package data

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"
)

// Corpus is the raw UTF-8 text of a training corpus. Text may be a
// memory-mapped view of a file: call Close when done with it and do not keep
// sub-slices of Text after that.
type Corpus struct {
	Name  string // the file path, or a description of the default corpus
	Text  []byte
	close func() error
}

// Close releases the memory behind Text.
func (c *Corpus) Close() error {
	if c.close == nil {
		return nil
	}
	err := c.close()
	c.close = nil
	c.Text = nil
	return err
}

// MaxStreamBytes bounds what Open reads from a pipe, FIFO, socket or
// device, which it cannot map and whose size it cannot know beforehand.
const MaxStreamBytes = 1 << 30

// Open memory-maps (or reads) the text file at path and checks that it is
// non-empty UTF-8 text without NUL bytes. A path that is not a regular
// file — a pipe or FIFO such as bash's <(command) (/dev/fd/N), a socket, a
// character device — is read as a stream to its end, up to MaxStreamBytes,
// stopping early at a NUL byte.
func Open(path string) (*Corpus, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("data file %s does not exist", path)
		}
		return nil, fmt.Errorf("data file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("data file: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("data file %s is a directory, not a text file", path)
	}
	if !st.Mode().IsRegular() {
		text, err := readStream(f)
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", path, err)
		}
		if err := CheckText(text); err != nil {
			return nil, fmt.Errorf("data file %s %w", path, err)
		}
		return &Corpus{Name: path, Text: text}, nil
	}
	if st.Size() == 0 {
		return nil, fmt.Errorf("data file %s is empty", path)
	}
	text, unmap, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("data file %s: reading: %w", path, err)
	}
	c := &Corpus{Name: path, Text: text, close: unmap}
	if err := CheckText(text); err != nil {
		c.Close()
		return nil, fmt.Errorf("data file %s %w", path, err)
	}
	return c, nil
}

// readStream reads r to its end. It stops after the block that holds a
// NUL byte (CheckText then names it), so that a binary stream such as
// /dev/zero ends at once, and fails past MaxStreamBytes.
func readStream(r io.Reader) ([]byte, error) {
	buf := make([]byte, 0, 64<<10)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), MaxStreamBytes+1-len(buf)))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		if bytes.IndexByte(buf[len(buf):len(buf)+n], 0) >= 0 {
			return buf[:len(buf)+n], nil
		}
		buf = buf[:len(buf)+n]
		if len(buf) > MaxStreamBytes {
			return nil, fmt.Errorf("reading: the stream is longer than %d MiB; save it to a file", MaxStreamBytes>>20)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading: %w", err)
		}
	}
}

// CheckText returns an error (phrased to follow a file name) when text is
// empty, contains a NUL byte or is not valid UTF-8, the signs of a binary
// file.
func CheckText(text []byte) error {
	if len(text) == 0 {
		return errors.New("is empty")
	}
	if i := bytes.IndexByte(text, 0); i >= 0 {
		return fmt.Errorf("is not a text file (NUL byte at offset %d); want UTF-8 text", i)
	}
	if !utf8.Valid(text) {
		i := 0
		for i < len(text) {
			r, n := utf8.DecodeRune(text[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return fmt.Errorf("is not UTF-8 text (invalid byte 0x%02x at offset %d)", text[i], i)
	}
	return nil
}

// GoRoot returns the root of the Go installation: $GOROOT, else the root
// this binary was built with, else the answer of `go env GOROOT`. It returns
// "" when none of them has a src directory.
func GoRoot() string {
	var cands []string
	if g := os.Getenv("GOROOT"); g != "" {
		cands = append(cands, g)
	}
	cands = append(cands, runtime.GOROOT())
	for _, c := range cands {
		if isDir(filepath.Join(c, "src")) {
			return c
		}
	}
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if c := strings.TrimSpace(string(out)); isDir(filepath.Join(c, "src")) {
			return c
		}
	}
	return ""
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Per-directory and per-file bounds of the default corpus: a few files from
// many packages rather than all of one.
const (
	defaultPerDir  = 48 << 10
	defaultMaxFile = 64 << 10
)

// DefaultCorpus concatenates Go source files of the standard library under
// goroot/src into a corpus of at most maxBytes bytes. The choice is
// deterministic for a given Go installation: directories are walked in
// lexical order, skipping cmd, vendor and testdata trees, tests, generated
// files (names starting with "z") and files over 64 KiB, and taking at most
// 48 KiB of files from each directory.
func DefaultCorpus(goroot string, maxBytes int) (*Corpus, error) {
	if goroot == "" {
		return nil, errors.New("no --data file given and no Go installation found for the default corpus (set GOROOT or pass --data FILE)")
	}
	src := filepath.Join(goroot, "src")
	var buf bytes.Buffer
	perDir := map[string]int{}
	errFull := errors.New("full")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped
		}
		name := d.Name()
		if d.IsDir() {
			rel, _ := filepath.Rel(src, p)
			if name == "testdata" || name == "vendor" || rel == "cmd" || (strings.HasPrefix(name, ".") && p != src) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "z") {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > defaultMaxFile || info.Size() == 0 {
			return nil
		}
		dir := filepath.Dir(p)
		if perDir[dir]+int(info.Size()) > defaultPerDir {
			return nil
		}
		if buf.Len()+int(info.Size()) > maxBytes {
			return errFull
		}
		b, err := os.ReadFile(p)
		if err != nil || CheckText(b) != nil {
			return nil
		}
		perDir[dir] += len(b)
		buf.Write(b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			buf.WriteByte('\n')
		}
		return nil
	})
	if err != nil && err != errFull {
		return nil, fmt.Errorf("default corpus: %w", err)
	}
	if buf.Len() == 0 {
		return nil, fmt.Errorf("default corpus: no Go source files found under %s (pass --data FILE)", src)
	}
	return &Corpus{Name: fmt.Sprintf("Go standard library sources under %s (%d bytes)", src, buf.Len()), Text: buf.Bytes()}, nil
}
