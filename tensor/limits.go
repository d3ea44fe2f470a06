package tensor

import (
	"math"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
)

// Sizes that cannot exist and sizes that cannot be allocated.
//
// A shape is valid when no dimension is negative and the product of its
// nonzero dimensions fits in an int (so that its element count and its
// contiguous strides do). checkedNumel enforces that wherever a shape comes
// from outside the package: creation, Reshape/View and Expand, and every
// output allocation (empty, emptyOut), which covers the shapes that ops
// compute (broadcasting, MatMul, Cat, Embedding).
//
// Before any storage is allocated, its size in bytes is compared with
// MaxAllocBytes, so that a request the machine cannot satisfy panics with
// an *Error (recoverable, and turned into an error by Catch) instead of
// ending the process with the runtime's fatal out-of-memory.

// checkedNumel returns the number of elements of shape. It panics with an
// *Error for op if a dimension is negative or if the product of the
// nonzero dimensions overflows int.
func checkedNumel(op string, shape []int) int {
	n, nz := 1, 1
	for _, d := range shape {
		if d < 0 {
			panicf(op, "negative dimension %d in shape %v", d, shape)
		}
		if d == 0 {
			n = 0
			continue
		}
		p, ok := mulInts(nz, d)
		if !ok {
			panicf(op, "shape %v has more elements than an int can count (the product of its dimensions overflows)", shape)
		}
		nz = p
	}
	if n == 0 {
		return 0
	}
	return nz
}

// mulInts returns a·b for non-negative a and b, and false if the product
// overflows int.
func mulInts(a, b int) (int, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt {
		return 0, false
	}
	return int(lo), true
}

// addInts returns a+b for non-negative a and b, and false if the sum
// overflows int.
func addInts(a, b int) (int, bool) {
	if a > math.MaxInt-b {
		return 0, false
	}
	return a + b, true
}

// checkShape panics with an *Error for op if shape is invalid (see
// checkedNumel) or if a Float32 tensor of that shape would exceed
// MaxAllocBytes. Creation functions call it before allocating anything.
func checkShape(op string, shape []int) {
	checkAlloc(op, Float32, shape)
}

// checkAlloc returns the number of elements of shape after checking that
// the shape is valid and that a storage of that many elements of dtype dt
// fits under MaxAllocBytes; otherwise it panics with an *Error for op.
func checkAlloc(op string, dt DType, shape []int) int {
	n := checkedNumel(op, shape)
	if msg := allocProblem(dt, n); msg != "" {
		panicf(op, "a %s tensor of shape %v %s", dt, shape, msg)
	}
	return n
}

// CheckAlloc panics with an *Error for op if a storage of n elements of
// dtype dt must not be allocated: n is negative, or its size in bytes is
// above MaxAllocBytes. The tensor package checks every storage it asks a
// backend for; backends call CheckAlloc before allocating storage of their
// own (temporary copies, workspaces), so that no request reaches the
// allocator that could end the process with a fatal out-of-memory.
func CheckAlloc(op string, dt DType, n int) {
	if n < 0 {
		panicf(op, "negative storage size %d", n)
	}
	if msg := allocProblem(dt, n); msg != "" {
		panicf(op, "a %s storage of %d elements %s", dt, n, msg)
	}
}

// addressSpace is the most bytes the Go runtime can hand out in one
// allocation on 64-bit platforms (2^48, the amd64 and arm64 heap arena
// limit); on 32-bit platforms it is the address space, 2^32.
const addressSpace = 1<<32 + (1<<48-1<<32)*(bits.UintSize/64)

// allocProblem returns why n elements of dt cannot be allocated ("" if
// they can).
func allocProblem(dt DType, n int) string {
	limit := MaxAllocBytes()
	size := int64(dt.ItemSize())
	if int64(n) <= limit/size && int64(n) <= addressSpace/size {
		return ""
	}
	var bytes string
	if int64(n) <= math.MaxInt64/size {
		b := int64(n) * size
		bytes = strconv.FormatInt(b, 10) + " bytes (" + formatBytes(float64(b)) + ")"
	} else {
		b := float64(n) * float64(size)
		bytes = strconv.FormatFloat(b, 'g', 4, 64) + " bytes (" + formatBytes(b) + ")"
	}
	if limit >= addressSpace {
		return "would need " + bytes + ", more than this platform can address in one allocation"
	}
	return "would need " + bytes + ", above the allocation limit of " +
		strconv.FormatInt(limit, 10) + " bytes (" + formatBytes(float64(limit)) + "); " +
		"tensor.SetMaxAllocBytes changes the limit"
}

// formatBytes writes b with a binary unit: "4 TiB", "1.5 GiB", "512 B".
func formatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := b, 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + units[u]
}

// allocLimit is the limit set by SetMaxAllocBytes; 0 means the default.
var allocLimit atomic.Int64

// defaultAllocLimit is the machine's physical memory (math.MaxInt64 where
// it cannot be read), computed once.
var defaultAllocLimit = sync.OnceValue(func() int64 {
	if m := physicalMemory(); m > 0 {
		return m
	}
	return math.MaxInt64
})

// MaxAllocBytes returns the largest size, in bytes, that one storage may
// have: every operation that would allocate a larger one (a creation
// function, an op's output, a host copy) panics with an *Error instead,
// before allocating anything. The default is the machine's physical
// memory where it can be read (Linux: the total RAM, or the cgroup's
// memory limit if that is lower), and no limit (math.MaxInt64) elsewhere.
// It is safe to call from any goroutine.
func MaxAllocBytes() int64 {
	if n := allocLimit.Load(); n > 0 {
		return n
	}
	return defaultAllocLimit()
}

// SetMaxAllocBytes sets the limit that MaxAllocBytes reports and returns
// the previous limit. n == 0 restores the default; math.MaxInt64 removes
// the limit; a negative n leaves the limit unchanged, so that
// SetMaxAllocBytes(-1) only reads it. The limit applies to each storage
// separately, on every device and every goroutine (it is process-wide
// configuration, like runtime/debug.SetMemoryLimit): set it once at
// start-up; a change made later is seen at once by every goroutine. It is
// safe to call from any goroutine.
func SetMaxAllocBytes(n int64) int64 {
	if n < 0 {
		return MaxAllocBytes()
	}
	prev := allocLimit.Swap(n)
	if prev > 0 {
		return prev
	}
	return defaultAllocLimit()
}
