package tensor

import (
	"math"
	"unsafe"
)

// mallocgc is the runtime's allocator. Called with a nil type it returns
// memory the garbage collector does not scan, and with needzero false it
// skips clearing it (a span fresh from the OS is zero anyway). The runtime
// keeps this symbol reachable by go:linkname for packages outside the
// standard library (see the "hall of shame" note on mallocgc in
// runtime/malloc.go).
//
//go:linkname mallocgc runtime.mallocgc
func mallocgc(size uintptr, typ unsafe.Pointer, needzero bool) unsafe.Pointer

// makeUninitF32 returns a float32 slice of length n whose contents are
// unspecified (whatever the memory last held). Only for outputs that the
// kernel writing them fully overwrites before anything reads them.
func makeUninitF32(n int) []float32 {
	if poisonUninit {
		s := make([]float32, n)
		for i := range s {
			s[i] = poison
		}
		return s
	}
	// small buffers: clearing costs nothing worth saving
	if n < 1024 {
		return make([]float32, n)
	}
	p := mallocgc(uintptr(n)*4, nil, false)
	return unsafe.Slice((*float32)(p), n)
}

// makeUninit16 is makeUninitF32 for a 16-bit buffer (poison16 where the
// tests ask for poison).
func makeUninit16(n int) []uint16 {
	if poisonUninit {
		s := make([]uint16, n)
		for i := range s {
			s[i] = poison16
		}
		return s
	}
	if n < 2048 {
		return make([]uint16, n)
	}
	p := mallocgc(uintptr(n)*2, nil, false)
	return unsafe.Slice((*uint16)(p), n)
}

// poisonUninit makes makeUninitF32 fill its buffers with poison, so that
// an element a kernel fails to write shows up in the results. The package's
// tests set it.
var poisonUninit = false

// poison is a NaN with a payload no arithmetic produces.
var poison = math.Float32frombits(0x7fa5a5a5)

// poison16 is a NaN in both 16-bit dtypes with a payload no arithmetic
// produces.
const poison16 = 0x7fa5

// uninitAllocator is implemented by backends that can allocate a storage
// without clearing it.
type uninitAllocator interface {
	// AllocUninit returns a storage of n elements of dt with unspecified
	// contents.
	AllocUninit(dt DType, n int) Storage
}

// AllocUninit returns a storage of n elements of dt whose contents are
// unspecified (zeros for Int64).
func (b cpuBackend) AllocUninit(dt DType, n int) Storage {
	switch dt {
	case Float32:
		return pooledF32(n, false)
	case BFloat16, Float16:
		return pooledH16(dt, n, false)
	}
	return b.Alloc(dt, n)
}

// emptyOut allocates a contiguous tensor of dt for an output that the
// kernel computing it writes in full (every element, whatever the inputs):
// on backends that can, its memory is not cleared first. Anything else must
// use empty. Like empty, it panics with an *Error for op if shape is
// invalid or the storage would exceed MaxAllocBytes.
func emptyOut(op string, b Backend, dt DType, shape []int) *Tensor {
	if u, ok := b.(uninitAllocator); ok {
		n := checkAlloc(op, dt, shape)
		return newTensor(b, u.AllocUninit(dt, n), contiguousLayout(shape))
	}
	return empty(op, b, dt, shape)
}
