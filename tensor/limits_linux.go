package tensor

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// physicalMemory returns the memory this process can have in bytes: the
// machine's total RAM (sysinfo), or the memory limit of the cgroup it runs
// in (as a container sees it at /sys/fs/cgroup) if that is lower; 0 if
// none can be read.
func physicalMemory() int64 {
	var m int64
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil {
		m = int64(uint64(si.Totalram) * uint64(si.Unit))
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// "max" (cgroup v2) and a huge number (v1) both mean no limit
		if c, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && c > 0 && (m == 0 || c < m) {
			m = c
		}
	}
	return m
}
