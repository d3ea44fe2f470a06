package hugepage

import (
	"os"
	"syscall"
	"unsafe"
)

// madvCollapse is MADV_COLLAPSE (Linux 6.1), which package syscall
// predates.
const madvCollapse = 25

var pageSize = uintptr(os.Getpagesize())

// advise marks [addr, addr+n) MADV_HUGEPAGE, so that the pages faulted in
// from now on are huge, and collapses into huge pages the 2 MiB stretches
// that already hold pages (MADV_COLLAPSE, Linux 6.1: a copy of what is
// there; a kernel without it leaves them to khugepaged). Stretches that
// hold none, such as a freshly allocated buffer that a loader is about to
// fill, are left to the faults, which costs nothing now. advise reports
// whether the kernel took the mark.
func advise(addr, n uintptr) bool {
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, addr, n, syscall.MADV_HUGEPAGE); e != 0 {
		return false
	}
	vec := make([]byte, (n+pageSize-1)/pageSize)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, addr, n, uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		return true
	}
	per := int(Size / pageSize)
	run := -1 // the first huge page of the run of resident ones
	flush := func(end int) {
		if run >= 0 {
			syscall.Syscall(syscall.SYS_MADVISE, addr+uintptr(run)*Size, uintptr(end-run)*Size, madvCollapse)
			run = -1
		}
	}
	for h := range len(vec) / per {
		resident := false
		for _, b := range vec[h*per : (h+1)*per] {
			if b&1 != 0 {
				resident = true
				break
			}
		}
		switch {
		case resident && run < 0:
			run = h
		case !resident:
			flush(h)
		}
	}
	flush(len(vec) / per)
	return true
}
