//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
)

var reduceOps = []tensor.ReduceOp{tensor.ReduceSum, tensor.ReduceMax, tensor.ReduceMin, tensor.ReduceArgMax, tensor.ReduceArgMin, tensor.ReduceLogSumExp}

// TestReduce runs every reduction over every dim of random views, on both
// kernels (one thread per output for short reduced dims or many adjacent
// outputs, one block per output otherwise), with ties (small integers),
// NaNs and -Inf rows.
func TestReduce(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	shapes := [][]int{
		{5, 7, 3},
		{4, 300},        // long rows: block kernel along dim 1
		{3000, 5},       // many outputs: thread kernel along dim 0
		{130, 3, 70},    // r != 1, few outputs, n ≥ 64: block kernel
		{1, 1},          // single element
		{2, 0, 3},       // empty reduced or kept dims
		{9, 2, 3, 4, 2}, // several kept dims
	}
	usedBlock, usedThread := false, false
	for _, shape := range shapes {
		for _, kind := range viewKinds {
			if numel(shape) == 0 && kind != contig {
				continue
			}
			v := makeView(r, shape, kind)
			for _, special := range []bool{false, true} {
				x := randn(r, v.n)
				for i := range x {
					if r.IntN(2) == 0 {
						x[i] = float32(math.Round(float64(x[i]) * 2)) // ties
					}
					if special && r.IntN(40) == 0 {
						x[i] = []float32{float32(math.NaN()), float32(math.Inf(-1)), float32(math.Inf(1))}[r.IntN(3)]
					}
				}
				src := upload(g, c, x)
				for dim := range shape {
					outShape := append(append([]int{}, shape[:dim]...), shape[dim+1:]...)
					nout := numel(outShape)
					n, st := shape[dim], v.l.Strides[dim]
					if useBlockReduce(max(nout, 1), n, st) {
						usedBlock = true
					} else {
						usedThread = true
					}
					for _, op := range reduceOps {
						if n == 0 && op != tensor.ReduceSum && op != tensor.ReduceLogSumExp {
							continue // package tensor rejects Max, Min, ArgMax of nothing
						}
						name := fmt.Sprintf("%s(dim %d)/%s %v special=%v", reduceNames[op], dim, kindNames[kind], v, special)
						if op == tensor.ReduceArgMax || op == tensor.ReduceArgMin {
							dst := poisoned(g, c, tensor.Int64, nout)
							g.Reduce(op, dst.g, src.g, v.l, dim)
							c.Reduce(op, dst.c, src.c, v.l, dim)
							gv, cv := dst.readInts(g, c)
							compareInts(t, name, gv, cv)
							continue
						}
						dst := poisoned(g, c, tensor.Float32, nout)
						g.Reduce(op, dst.g, src.g, v.l, dim)
						c.Reduce(op, dst.c, src.c, v.l, dim)
						gv, cv := dst.read(g, c)
						compare(t, name, gv, cv, reduceTol)
					}
				}
			}
		}
	}
	if !usedBlock || !usedThread {
		t.Errorf("the shapes should exercise both reduction kernels (block %v, thread %v)", usedBlock, usedThread)
	}
}

// TestReduceAllElements reduces a large flattened tensor to one value, the
// path of t.Sum() and t.Max() with no dims.
func TestReduceAllElements(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	n := 1 << 20
	src := upload(g, c, randn(r, n))
	for _, op := range reduceOps {
		l := whole(n)
		if op == tensor.ReduceArgMax || op == tensor.ReduceArgMin {
			dst := poisoned(g, c, tensor.Int64, 1)
			g.Reduce(op, dst.g, src.g, l, 0)
			c.Reduce(op, dst.c, src.c, l, 0)
			gv, cv := dst.readInts(g, c)
			compareInts(t, reduceNames[op], gv, cv)
			continue
		}
		dst := poisoned(g, c, tensor.Float32, 1)
		g.Reduce(op, dst.g, src.g, l, 0)
		c.Reduce(op, dst.c, src.c, l, 0)
		gv, cv := dst.read(g, c)
		compare(t, reduceNames[op], gv, cv, reduceTol)
	}
}
