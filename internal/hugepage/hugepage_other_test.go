//go:build !linux

package hugepage

import (
	"testing"
	"unsafe"
)

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func TestAdviseElsewhere(t *testing.T) {
	b := make([]byte, 4*Size)
	if got := Advise(uintptrOf(b), uintptr(len(b))); got != 0 {
		t.Errorf("Advise off Linux = %d, want 0", got)
	}
}
