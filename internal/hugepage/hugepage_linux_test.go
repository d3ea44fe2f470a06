package hugepage

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// kernelAtLeast reports whether the running kernel is major.minor or later.
func kernelAtLeast(major, minor int) bool {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return false
	}
	var rel []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel = append(rel, byte(c))
	}
	f := strings.FieldsFunc(string(rel), func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false
	}
	ma, _ := strconv.Atoi(f[0])
	mi, _ := strconv.Atoi(f[1])
	return ma > major || ma == major && mi >= minor
}

// TestAdvise advises a buffer whose pages are all there (written), as a
// model's weights are once built: the mark must be on the whole pages
// inside it, they must be huge where the kernel can collapse them (Linux
// 6.1 and later, transparent huge pages not "never"), and every byte must
// stay as it was.
func TestAdvise(t *testing.T) {
	if Disabled {
		t.Skip("WICK_HUGEPAGES=0 in the environment")
	}
	b := make([]byte, 5*Size+12345)
	for i := range b {
		b[i] = byte(i * 7)
	}
	addr := uintptrOf(b)
	lo, hi := Interior(addr, uintptr(len(b)))
	got := Advise(addr, uintptr(len(b)))
	mode := Enabled()
	if mode == "" {
		t.Logf("no transparent huge pages on this kernel: Advise = %d", got)
		return
	}
	if got != int(hi-lo) || got < 4*Size {
		t.Fatalf("Advise of %d bytes at %#x = %d, want the %d bytes of its whole huge pages", len(b), addr, got, hi-lo)
	}
	marked, huge, err := Mapped(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	if !marked {
		t.Errorf("the mappings under %#x-%#x lack MADV_HUGEPAGE's mark (hg)", lo, hi)
	}
	if mode != "never" && kernelAtLeast(6, 1) && huge < int64(hi-lo) {
		t.Errorf("the mappings under %#x-%#x hold %d bytes of huge pages after MADV_COLLAPSE, want at least %d (transparent huge pages %q)", lo, hi, huge, hi-lo, mode)
	}
	for i := range b {
		if b[i] != byte(i*7) {
			t.Fatalf("byte %d changed: %d, want %d", i, b[i], byte(i*7))
		}
	}
}
