package tensor

// Release frees the memory of t's storage now, instead of when the garbage
// collector finds the storage unreachable: on a GPU the memory goes back to
// the allocator's cache at once (package cuda); on the CPU the storage drops
// its buffer, which goes to the CPU free list at once for later
// allocations of the same size to reuse (or, for small or pinned buffers,
// to the collector), even while tensors still refer to the storage. Every
// tensor that views the same storage (views, Detach) becomes unusable: an operation that reads or
// writes one afterwards panics with an *Error naming the operation, though
// its shape, dtype and device can still be asked. Releasing twice is
// harmless. Release is for loops that must keep memory flat, such as
// dropping the activations of a step as soon as the step is done. It must
// not run while another goroutine uses a tensor viewing the storage.
func (t *Tensor) Release() {
	if r, ok := t.storage.(interface{ Release() }); ok {
		r.Release()
	}
}
