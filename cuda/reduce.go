//go:build cuda

package cuda

import (
	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

var reduceNames = [...]string{"Sum", "Max", "Min", "ArgMax", "ArgMin", "LogSumExp"}

// Reduce reduces src along dim into the contiguous dst.
func (b *backend) Reduce(op tensor.ReduceOp, dst, src tensor.Storage, sl tensor.Layout, dim int) {
	name := "Reduce"
	if int(op) < len(reduceNames) {
		name = reduceNames[op]
	}
	defer b.d.enter()()
	outShape := append(append([]int{}, sl.Shape[:dim]...), sl.Shape[dim+1:]...)
	outStrides := append(append([]int{}, sl.Strides[:dim]...), sl.Strides[dim+1:]...)
	nout := numel(outShape)
	d, s := b.rows(name, dst, nout), b.view(name, src, sl)
	defer keepAlive(d, s)
	if nout == 0 {
		return
	}
	n, r := sl.Shape[dim], sl.Strides[dim]
	arg := op == tensor.ReduceArgMax || op == tensor.ReduceArgMin
	forChunks(outShape, [][]int{tensor.ContiguousStrides(outShape), outStrides}, func(offs, shape []int, st [][]int) {
		no := numel(shape)
		p := planReduce(no, n, r, op == tensor.ReduceLogSumExp)
		if p.kind == reduceSplit {
			b.reduceSplit(name, op, p, d.ptr(name, offs[0]), s.ptr(name, sl.Offset+offs[1]), no, n, r, shape, st[1])
			return
		}
		a := &args{}
		a.ptr(d.ptr(name, offs[0])).ptr(s.ptr(name, sl.Offset+offs[1])).i64(no).i64(n).i64(r).i32(int(op)).layout(shape, st[1])
		block := p.kind == reduceBlock
		var fn cu.Function
		switch {
		case arg && block:
			fn = b.d.k.argreduce
		case arg:
			fn = b.d.k.argreduceSmall
		case block:
			fn = b.d.k.reduce
		default:
			fn = b.d.k.reduceSmall
		}
		if block {
			b.d.launchRows(name, fn, no, a)
		} else {
			b.d.launch1D(name, fn, no, a)
		}
	})
}

// reduceSplit runs a split reduction (planReduce): partials of p.chunks
// chunks per output, then their combination into dst (nout outputs, int64
// for argmax/argmin). src points at the first output's first element; the
// outputs have shape and source strides st.
func (b *backend) reduceSplit(name string, op tensor.ReduceOp, p reducePlan, dst, src cu.DevicePtr, nout, n, r int, shape, st []int) {
	arg := op == tensor.ReduceArgMax || op == tensor.ReduceArgMin
	parts := int64(p.chunks) * int64(nout)
	part := b.scratch(name, parts*8)
	defer b.d.alloc.put(part)
	var pidx cu.DevicePtr
	if arg {
		blk := b.scratch(name, parts*8)
		defer b.d.alloc.put(blk)
		pidx = cu.DevicePtr(blk.ptr)
	}
	a := &args{}
	a.ptr(cu.DevicePtr(part.ptr)).ptr(pidx).ptr(src).i64(nout).i64(n).i64(r).i32(int(op)).i64(p.chunk).i32(p.tx).layout(shape, st)
	b.d.launch(name, b.d.k.reducePart, (nout+p.tx-1)/p.tx, p.chunks, rowThreads, a)
	var df, di cu.DevicePtr = dst, 0
	if arg {
		df, di = 0, dst
	}
	a = &args{}
	a.ptr(df).ptr(di).ptr(cu.DevicePtr(part.ptr)).ptr(pidx).i64(nout).i64(p.chunks).i32(int(op)).i32(0)
	b.d.launch1D(name, b.d.k.reduceFinal, nout, a)
}
