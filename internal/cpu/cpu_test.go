package cpu

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestHasAVX2FMA compares the CPUID answer with the kernel's view of the
// processor where Linux exposes it.
func TestHasAVX2FMA(t *testing.T) {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil || runtime.GOARCH != "amd64" {
		t.Skipf("no /proc/cpuinfo on %s/%s to compare with", runtime.GOOS, runtime.GOARCH)
	}
	var flags []string
	for _, line := range strings.Split(string(info), "\n") {
		if strings.HasPrefix(line, "flags") {
			flags = strings.Fields(line)
			break
		}
	}
	has := func(f string) bool {
		for _, x := range flags {
			if x == f {
				return true
			}
		}
		return false
	}
	want := detects && has("avx2") && has("fma")
	if HasAVX2FMA != want {
		t.Errorf("HasAVX2FMA = %v, want %v (/proc/cpuinfo lists avx2=%v fma=%v; detection in this build: %v)", HasAVX2FMA, want, has("avx2"), has("fma"), detects)
	}
}
