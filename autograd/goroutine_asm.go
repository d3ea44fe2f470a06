//go:build amd64 || arm64

package autograd

// goroutineKey returns a value that identifies the calling goroutine for as
// long as it runs: the address of the runtime's descriptor of the goroutine.
// A goroutine that has exited may leave its descriptor to a later one, so
// keys must not outlive the call that took them.
func goroutineKey() uintptr
