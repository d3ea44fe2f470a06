package hugepage

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Mapped returns, for the process's memory mappings that overlap [lo,
// hi), whether every one carries the MADV_HUGEPAGE mark ("hg" in
// /proc/self/smaps) and how many bytes of them are anonymous huge pages
// now: what tests read to see that Advise took effect.
func Mapped(lo, hi uintptr) (marked bool, hugeBytes int64, err error) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return false, 0, err
	}
	found, marked := false, true
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if a, z, ok := strings.Cut(f[0], "-"); ok && !strings.HasSuffix(f[0], ":") {
			start, err1 := strconv.ParseUint(a, 16, 64)
			end, err2 := strconv.ParseUint(z, 16, 64)
			in = err1 == nil && err2 == nil && uintptr(start) < hi && uintptr(end) > lo
			found = found || in
			continue
		}
		if !in {
			continue
		}
		switch f[0] {
		case "AnonHugePages:":
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			hugeBytes += kb << 10
		case "VmFlags:":
			marked = marked && strings.Contains(line, " hg")
		}
	}
	if !found {
		return false, 0, fmt.Errorf("hugepage: no mapping overlaps %#x-%#x", lo, hi)
	}
	return marked, hugeBytes, sc.Err()
}

// Enabled returns the kernel's transparent huge page setting: "always",
// "madvise" or "never" (from /sys/kernel/mm/transparent_hugepage/enabled),
// or "" where the file is missing.
func Enabled() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return ""
}
