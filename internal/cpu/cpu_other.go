//go:build !amd64 || purego

package cpu

// detects is false: this build has no feature detection.
const detects = false

func hasAVX2FMA() bool { return false }
