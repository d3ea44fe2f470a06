package tensor_test

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestReleaseCPU checks Release on the CPU: the buffer goes to the garbage
// collector or the free list while the tensor is still referenced (a new
// tensor of its size takes no more memory), every tensor viewing the
// storage then panics with an *Error naming the operation, its metadata
// stays readable, and other storages are unaffected.
func TestReleaseCPU(t *testing.T) {
	const n = 16 << 20 // 64 MiB of float32
	var ms runtime.MemStats
	big := tensor.Zeros(n)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	big.Release()
	// The buffer goes to the collector or to the CPU free list; either way
	// a new tensor of the same size must fit in the memory it freed.
	again := tensor.Zeros(n)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grown := int64(ms.HeapAlloc) - int64(before); grown > n*4/2 {
		t.Errorf("the heap grew by %d bytes when a %d-byte tensor replaced a released one that is still referenced", grown, n*4)
	}
	runtime.KeepAlive(again)
	if big.Numel() != n || big.DType() != tensor.Float32 || big.Device() != tensor.CPU {
		t.Errorf("released tensor: numel %d, %v on %v", big.Numel(), big.DType(), big.Device())
	}
	runtime.KeepAlive(big)

	x := tensor.Arange(0, 12, 1).Reshape(3, 4)
	keep := x.Clone()
	view, det := x.T(), x.Detach()
	ids := tensor.FromInts([]int{1, 2, 0}, 3)
	x.Release()
	x.Release() // twice: nothing more
	ids.Release()
	cases := []struct {
		op string
		f  func()
	}{
		{"Tensor.Float32s", func() { x.Float32s() }},
		{"Tensor.Add", func() { view.Add(view) }},
		{"Tensor.Sum", func() { det.Sum() }},
		{"Tensor.MatMul", func() { keep.MatMul(view) }},
		{"Tensor.Contiguous", func() { view.Contiguous() }},
		{"Tensor.Ints", func() { ids.Ints() }},
		{"Tensor.IndexSelect", func() { keep.IndexSelect(0, ids) }},
		{"Tensor.CopyFrom", func() { det.CopyFrom(keep) }},
	}
	for _, c := range cases {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || te.Op != c.op || !strings.Contains(te.Msg, "released") {
			t.Errorf("%s on a released storage: %v, want a *tensor.Error for op %s", c.op, err, c.op)
		}
	}
	if ids.DType() != tensor.Int64 || !slices.Equal(view.Shape(), []int{4, 3}) {
		t.Errorf("metadata after Release: %v %v", ids.DType(), view.Shape())
	}
	if got := keep.Sum().Item(); got != 66 {
		t.Errorf("a clone made before Release sums to %v, want 66", got)
	}
}
