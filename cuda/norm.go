//go:build cuda

package cuda

import (
	"unsafe"

	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

var _ tensor.Normer = (*backend)(nil)

// normChunk is the number of elements of one chunk of GlobalNorm's
// multi-tensor kernel: large tensors are cut into chunks of this size,
// small ones are a chunk each.
const normChunk = 1 << 16

// GlobalNorm writes √(Σ x²) over the first ns[i] elements of each srcs[i]
// into dst with one pass over all of them (csrc/norm.cu): the tensors are
// cut into chunks, a table of the chunks' addresses and lengths is copied
// to the device, and at most splitBlocks blocks sum the squares of their
// chunks in double; wick_reduce_final_f32 adds the blocks' partials and
// takes the root.
func (b *backend) GlobalNorm(dst tensor.Storage, srcs []tensor.Storage, ns []int) {
	const op = "GlobalNorm"
	defer b.d.enter()()
	d := b.rows(op, dst, 1)
	defer keepAlive(d, srcs)
	var ptrs, lens []int64
	for i, s := range srcs {
		cs := b.rows(op, s, ns[i])
		for off := 0; off < ns[i]; off += normChunk {
			ptrs = append(ptrs, int64(cs.ptr(op, off)))
			lens = append(lens, int64(min(normChunk, ns[i]-off)))
		}
	}
	if len(ptrs) == 0 {
		b.Fill(dst, contiguous([]int{1}), 0)
		return
	}
	nchunks := len(ptrs)
	table := append(ptrs, lens...)
	tab := b.scratch(op, int64(len(table))*8)
	defer b.d.alloc.put(tab)
	b.htod(op, cu.DevicePtr(tab.ptr), unsafe.Pointer(&table[0]), int64(len(table))*8)
	blocks := min(nchunks, splitBlocks)
	part := b.scratch(op, int64(blocks)*8)
	defer b.d.alloc.put(part)
	a := &args{}
	a.ptr(cu.DevicePtr(part.ptr)).ptr(cu.DevicePtr(tab.ptr)).ptr(cu.DevicePtr(tab.ptr) + cu.DevicePtr(8*nchunks)).i64(nchunks)
	b.d.launch(op, b.d.k.sumsqChunks, blocks, 1, rowThreads, a)
	a = &args{}
	a.ptr(d.ptr(op, 0)).ptr(0).ptr(cu.DevicePtr(part.ptr)).ptr(0).i64(1).i64(blocks).i32(int(tensor.ReduceSum)).i32(1)
	b.d.launch1D(op, b.d.k.reduceFinal, 1, a)
}
