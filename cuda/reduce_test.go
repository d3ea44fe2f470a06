//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
)

var reduceOps = []tensor.ReduceOp{tensor.ReduceSum, tensor.ReduceMax, tensor.ReduceMin, tensor.ReduceArgMax, tensor.ReduceArgMin, tensor.ReduceLogSumExp}

// TestReduce runs every reduction over every dim of random views, on all
// three kernels (planReduce: one thread per output for short reduced dims,
// one block per output for long contiguous lines, split into tiles and
// chunks otherwise), with ties (small integers), NaNs and -Inf rows.
func TestReduce(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	shapes := [][]int{
		{5, 7, 3},
		{4, 300},        // long rows: block kernel along dim 1
		{3000, 5},       // many outputs: thread kernel along dim 0
		{130, 3, 70},    // r != 1, few outputs, n ≥ 64: split kernel
		{5000, 3},       // long lines: split kernel along dim 0
		{1, 1},          // single element
		{2, 0, 3},       // empty reduced or kept dims
		{9, 2, 3, 4, 2}, // several kept dims
	}
	used := map[int]bool{}
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
					used[planReduce(max(nout, 1), n, st, false).kind] = true
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
	if !used[reduceThread] || !used[reduceBlock] || !used[reduceSplit] {
		t.Errorf("the shapes should exercise all three reduction kernels (used %v)", used)
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

// TestReduceLengths reduces all n elements of a vector to one value, for n
// from 1 to 10^7, odd sizes and sizes next to the chunk boundaries
// included, and checks every reduction but LogSumExp against the CPU
// (sums within doubleSumsBound, the other ops exactly). The long
// ones take the split kernels, as t.Sum() and ClipGradNorm do.
func TestReduceLengths(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	lengths := []int{1, 2, 3, 63, 64, 65, 255, 257, 2047, 2049, 4095, 4097, 65537, 100003, 999983, 1<<20 + 1, 4_194_319, 10_000_000}
	ops := []tensor.ReduceOp{tensor.ReduceSum, tensor.ReduceMax, tensor.ReduceMin, tensor.ReduceArgMax, tensor.ReduceArgMin}
	for _, n := range lengths {
		x := randn(r, n)
		if n > 10 { // the extremes somewhere inside, once each
			x[r.IntN(n)] = 9
			x[r.IntN(n)] = -9
		}
		var abs float64
		for _, v := range x {
			abs += math.Abs(float64(v))
		}
		src := upload(g, c, x)
		l := whole(n)
		for _, op := range ops {
			name := fmt.Sprintf("%s of %d elements (plan %+v)", reduceNames[op], n, planReduce(1, n, 1, false))
			if op == tensor.ReduceArgMax || op == tensor.ReduceArgMin {
				dst := poisoned(g, c, tensor.Int64, 1)
				g.Reduce(op, dst.g, src.g, l, 0)
				c.Reduce(op, dst.c, src.c, l, 0)
				gv, cv := dst.readInts(g, c)
				compareInts(t, name, gv, cv)
				continue
			}
			dst := poisoned(g, c, tensor.Float32, 1)
			g.Reduce(op, dst.g, src.g, l, 0)
			c.Reduce(op, dst.c, src.c, l, 0)
			gv, cv := dst.read(g, c)
			if op == tensor.ReduceSum {
				compareSums(t, name, gv, cv, []float64{doubleSumsBound(n, cv[0], abs)})
				continue
			}
			compare(t, name, gv, cv, tol{0, 0})
		}
	}
	// column sums (reduced stride ≠ 1): a bias gradient, a tall matrix
	for _, rc := range [][2]int{{1024, 2304}, {999_983, 3}, {65, 129}} {
		rows, cols := rc[0], rc[1]
		x := randn(r, rows*cols)
		abs := make([]float64, cols)
		for i, v := range x {
			abs[i%cols] += math.Abs(float64(v))
		}
		src := upload(g, c, x)
		l := tensor.Layout{Shape: []int{rows, cols}, Strides: []int{cols, 1}}
		for _, op := range ops {
			name := fmt.Sprintf("%s over dim 0 of [%d %d] (plan %+v)", reduceNames[op], rows, cols, planReduce(cols, rows, cols, false))
			if op == tensor.ReduceArgMax || op == tensor.ReduceArgMin {
				dst := poisoned(g, c, tensor.Int64, cols)
				g.Reduce(op, dst.g, src.g, l, 0)
				c.Reduce(op, dst.c, src.c, l, 0)
				gv, cv := dst.readInts(g, c)
				compareInts(t, name, gv, cv)
				continue
			}
			dst := poisoned(g, c, tensor.Float32, cols)
			g.Reduce(op, dst.g, src.g, l, 0)
			c.Reduce(op, dst.c, src.c, l, 0)
			gv, cv := dst.read(g, c)
			if op == tensor.ReduceSum {
				bound := make([]float64, cols)
				for j := range bound {
					bound[j] = doubleSumsBound(rows, cv[j], abs[j])
				}
				compareSums(t, name, gv, cv, bound)
				continue
			}
			compare(t, name, gv, cv, tol{0, 0})
		}
	}
}

// doubleSumsBound is how far apart two sums of the same n float32 terms
// may be when each is accumulated in float64 in its own order and rounded
// to float32 once, as the GPU's split reduction and the CPU both do: each
// float64 sum is within n·2^-53·Σ|x| of the exact sum, and each rounding
// moves it by at most 2^-24 of its size.
func doubleSumsBound(n int, sum float32, abs float64) float64 {
	return 2*float64(n)*0x1p-53*abs + 0x1p-23*math.Abs(float64(sum)) + 0x1p-149
}

// TestGlobalNorm checks the one-pass norm of many tensors (the multi-tensor
// kernel of ClipGradNorm) against the CPU: tensors smaller than, equal to
// and just over a chunk, empty ones, and more chunks than blocks.
func TestGlobalNorm(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for _, sizes := range [][]int{{1}, {0, 3}, {768, normChunk, normChunk + 1, 0, 5}, {2_359_296, 768, 3 * 768 * 768, 50257}, {1100 * normChunk}} {
		var gs, cs []tensor.Storage
		var abs float64
		for _, n := range sizes {
			x := randn(r, n)
			for _, v := range x {
				abs += float64(v) * float64(v)
			}
			p := upload(g, c, x)
			gs, cs = append(gs, p.g), append(cs, p.c)
		}
		dst := poisoned(g, c, tensor.Float32, 1)
		g.(tensor.Normer).GlobalNorm(dst.g, gs, sizes)
		c.(tensor.Normer).GlobalNorm(dst.c, cs, sizes)
		gv, cv := dst.read(g, c)
		// both sum the squares in float64 (error ≤ n·2^-53·Σx² each) and
		// round the root once
		n := 0
		for _, k := range sizes {
			n += k
		}
		bound := float64(n)*0x1p-53*math.Sqrt(abs) + 0x1p-22*math.Abs(float64(cv[0]))
		compareSums(t, fmt.Sprintf("GlobalNorm of %v", sizes), gv, cv, []float64{bound})
		if want := float32(math.Sqrt(abs)); math.Abs(float64(cv[0]-want)) > 0x1p-22*float64(want) {
			t.Errorf("GlobalNorm of %v on the CPU: %v, want %v", sizes, cv[0], want)
		}
	}
}
