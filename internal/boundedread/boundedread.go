// Package boundedread reads files whose size comes from outside the
// program (configs, tokenizer vocabularies, indexes) with a limit on the
// bytes read, so that a huge file or an endless one (/dev/zero, a FIFO
// that never closes) is refused with an error naming it instead of
// growing the process until it is killed.
//
// nn and tokenizer read their small outside files through it. The package
// is internal: it is a file helper, not part of Wick's library API.
package boundedread

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// ErrTooLarge is wrapped by the errors of ReadFile and ReadAll for a file
// or stream longer than its limit.
var ErrTooLarge = errors.New("file too large")

// ReadFile returns the contents of the file at path, or an error wrapping
// ErrTooLarge when it holds more than limit bytes. A regular file's size
// is checked before anything is read; other files (devices, pipes) are
// read until limit+1 bytes arrive. what names the file's role in the
// message ("config.json").
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b []byte
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		if fi.Size() > limit {
			return nil, tooLarge(path, what, fi.Size(), limit)
		}
		b = make([]byte, 0, fi.Size()+1) // read at once, unless the file grows meanwhile
	}
	b, err = readAll(f, limit, b)
	if errors.Is(err, ErrTooLarge) {
		return nil, tooLarge(path, what, -1, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// ReadAll reads r to its end, or returns an error wrapping ErrTooLarge
// as soon as more than limit bytes have come.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	return readAll(r, limit, nil)
}

// readAll is ReadAll into b when it has room for all of r (a regular
// file, whose size is known), else through blocks joined at the end, so
// that at most twice the bytes read are allocated.
func readAll(r io.Reader, limit int64, b []byte) ([]byte, error) {
	lr := io.LimitReader(r, limit+1)
	var blocks [][]byte
	total := 0
	for {
		if len(b) == cap(b) {
			if b != nil {
				blocks = append(blocks, b)
			}
			b = make([]byte, 0, min(max(int64(total), 4<<10), 1<<20))
		}
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		total += n
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(total) > limit {
		return nil, fmt.Errorf("%w: more than %s", ErrTooLarge, Format(limit))
	}
	if len(blocks) == 0 {
		return b, nil
	}
	out := make([]byte, 0, total)
	for _, bl := range append(blocks, b) {
		out = append(out, bl...)
	}
	return out, nil
}

func tooLarge(path, what string, size, limit int64) error {
	if size < 0 {
		return fmt.Errorf("%s: %w: it goes on past the limit of %s for %s", path, ErrTooLarge, Format(limit), what)
	}
	return fmt.Errorf("%s: %w: %s, above the limit of %s for %s", path, ErrTooLarge, Format(size), Format(limit), what)
}

// Format writes a byte count with a binary unit: "512 B", "1.5 MiB".
func Format(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(b), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + units[u]
}
