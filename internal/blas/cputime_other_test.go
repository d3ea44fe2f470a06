//go:build !unix

package blas

import "time"

// processCPU returns 0: this platform's CPU time is not read.
func processCPU() time.Duration { return 0 }
