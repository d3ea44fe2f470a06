//go:build !linux

package data

import (
	"io"
	"os"
)

// mapFile reads f (of size n) into memory; platforms other than Linux do not
// memory-map. The returned function is a no-op.
func mapFile(f *os.File, n int64) ([]byte, func() error, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
