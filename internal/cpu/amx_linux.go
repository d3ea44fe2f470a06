//go:build amd64 && linux && !purego

package cpu

import "syscall"

// Linux's arch_prctl request for an extended state component and the tile
// data's component number (arch/x86/include/uapi/asm/prctl.h).
const (
	archReqXcompPerm = 0x1023
	xfeatureTileData = 18
)

// requestAMX asks Linux for the AMX tile data state, which a process must
// hold before its first tile instruction (the permission is the whole
// process's, its threads' present and future).
func requestAMX() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureTileData, 0); errno != 0 {
		return errno
	}
	return nil
}
