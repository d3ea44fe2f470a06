//go:build !linux

package tensor

// physicalMemory returns 0: outside Linux the default allocation limit is
// none.
func physicalMemory() int64 { return 0 }
