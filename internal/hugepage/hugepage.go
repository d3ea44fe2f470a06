// Package hugepage asks the operating system to back long-lived buffers,
// such as a model's weights, with transparent huge pages.
//
// Generation reads every weight once per token, from memory rather than
// from cache; with 4 KiB pages that stream takes a TLB miss every 4 KiB
// and the hardware prefetchers stop at each page's end. On Linux, whose
// transparent_hugepage setting is "madvise" on most distributions, memory
// gets 2 MiB pages only where the process asks: Advise asks (MADV_HUGEPAGE,
// so that pages faulted in later are huge) and, on Linux 6.1 and later,
// collapses the pages already there at once (MADV_COLLAPSE) instead of
// leaving them to khugepaged. Elsewhere, and whenever the kernel declines,
// it does nothing: huge pages are a speed-up, never a requirement.
package hugepage

import "os"

// Size is the huge page size Advise works in: 2 MiB, the transparent huge
// page of x86-64 and of arm64 with 4 KiB base pages.
const Size = 2 << 20

// Disabled reports whether the environment set WICK_HUGEPAGES=0 at
// start-up, which turns Advise off for the process.
var Disabled = os.Getenv("WICK_HUGEPAGES") == "0"

// Interior returns the whole huge pages [lo, hi) inside the n bytes at
// addr, lo == hi when there is none.
func Interior(addr, n uintptr) (lo, hi uintptr) {
	lo = (addr + Size - 1) &^ (Size - 1)
	hi = (addr + n) &^ (Size - 1)
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// Advise asks for huge pages under the whole 2 MiB pages inside the n
// bytes at addr and returns how many bytes it asked for: 0 when they hold
// no whole huge page, when Disabled, or where the kernel refuses (no
// transparent huge pages, or off Linux). The memory must be the process's
// own, mapped, and stay so through the call; its contents do not change.
func Advise(addr, n uintptr) int {
	if Disabled || addr == 0 {
		return 0
	}
	lo, hi := Interior(addr, n)
	if hi == lo || !advise(lo, hi-lo) {
		return 0
	}
	return int(hi - lo)
}
