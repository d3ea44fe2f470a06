//go:build !amd64 || purego

package cpu

// detects is false: this build has no feature detection.
const detects = false

func detect() Level { return Generic }

func cacheSizes() (l1d, l2 int) { return 0, 0 }
