//go:build !amd64 || !linux || purego

package cpu

import "errors"

// requestAMX fails: this build asks no operating system for the tile state.
func requestAMX() error { return errors.New("AMX tiles are requested on linux/amd64 only") }
