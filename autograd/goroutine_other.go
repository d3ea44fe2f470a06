//go:build !amd64 && !arm64

package autograd

import (
	"runtime"
	"strconv"
)

// goroutineKey returns the calling goroutine's id, read from the header of
// its stack trace ("goroutine 18 [running]:"). This costs a microsecond or
// so; amd64 and arm64 read the runtime's goroutine pointer in assembly
// instead.
func goroutineKey() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	b = b[len(prefix):]
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	id, err := strconv.ParseUint(string(b[:i]), 10, 64)
	if err != nil {
		panicf("goroutineKey", "cannot read the goroutine id from the stack header %s", strconv.Quote(string(buf[:])))
	}
	return uintptr(id)
}
