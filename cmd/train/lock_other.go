//go:build !unix

package main

import "os"

// lockFile does nothing where there is no flock: runs sharing an out_dir
// are not detected there.
func lockFile(*os.File) error { return nil }

// probeFile does nothing where there is no flock.
func probeFile(*os.File) error { return nil }
