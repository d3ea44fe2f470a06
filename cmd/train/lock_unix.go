//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f without waiting.
func lockFile(f *os.File) error { return flock(f, syscall.LOCK_EX) }

// probeFile takes a shared flock on f without waiting: it fails, with
// errLocked, only while a run holds the exclusive one (shared probes of
// several ranks starting at once do not conflict).
func probeFile(f *os.File) error { return flock(f, syscall.LOCK_SH) }

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		}
		return err
	}
}
