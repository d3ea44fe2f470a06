//go:build linux

package data

import (
	"os"
	"syscall"
)

// mapFile maps f (of size n > 0) read-only into memory. The returned function
// unmaps it.
func mapFile(f *os.File, n int64) ([]byte, func() error, error) {
	if int64(int(n)) != n {
		return nil, nil, syscall.EFBIG
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(n), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}
