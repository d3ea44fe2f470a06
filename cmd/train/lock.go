package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// lockName is the lock file a training run holds in out_dir while it
// runs, so that two runs never write one out_dir at the same time.
const lockName = "train.lock"

// dirLock is a held out_dir lock.
type dirLock struct{ f *os.File }

// lockOutDir takes the lock of out_dir dir, which exists: an exclusive
// flock(2) on dir/train.lock (where the platform has one), released by the
// kernel when the process ends however it ends, so a run killed with
// SIGKILL leaves nothing that stops the next one. The file holds the
// holder's pid, which the error of a second run names.
func lockOutDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--out_dir: lock: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, lockError(dir, path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

// lockError is the error of a lock or probe of out_dir dir's lock file
// path that failed with err: naming the holder's pid when another run
// holds it.
func lockError(dir, path string, err error) error {
	if errors.Is(err, errLocked) {
		holder := ""
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
		}
		return fmt.Errorf("--out_dir=%s is in use by another training run%s: wait for it to end, or give another --out_dir", dir, holder)
	}
	return fmt.Errorf("--out_dir: lock %s: %w", path, err)
}

// probeOutDir returns lockOutDir's error when another run holds out_dir
// dir's lock, and nil when none does (or dir has no lock file), leaving no
// lock held. A resumed run probes before it reads the checkpoint that the
// other run may be saving; it takes the lock itself later, with its
// outputs.
func probeOutDir(dir string) error {
	path := filepath.Join(dir, lockName)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--out_dir: lock: %w", err)
	}
	defer f.Close() // closing releases the shared lock
	if err := probeFile(f); err != nil {
		return lockError(dir, path, err)
	}
	return nil
}

// release gives the lock up (the process's end does too).
func (l *dirLock) release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// errLocked is lockFile's error when another process holds the lock.
var errLocked = errors.New("locked by another process")
