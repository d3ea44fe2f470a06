//go:build !linux

package hugepage

import "errors"

// advise does nothing where transparent huge pages are not Linux's.
func advise(addr, n uintptr) bool { return false }

// Mapped is Linux's only: elsewhere it returns an error.
func Mapped(lo, hi uintptr) (marked bool, hugeBytes int64, err error) {
	return false, 0, errors.New("hugepage: no /proc/self/smaps off Linux")
}

// Enabled returns "": no transparent huge pages off Linux.
func Enabled() string { return "" }
