package tensor

// Release frees the memory of t's storage now, instead of when the garbage
// collector finds the storage unreachable: on a GPU the memory goes back to
// the allocator's cache at once (package cuda); on the CPU it does nothing,
// the collector frees host memory. Every tensor that views the same storage
// (views, Detach) becomes unusable: using one afterwards panics. Release is
// for loops that must keep device memory flat, such as dropping the
// activations of a step as soon as the step is done.
func (t *Tensor) Release() {
	if r, ok := t.storage.(interface{ Release() }); ok {
		r.Release()
	}
}
