package backendtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
)

var reduceOps = []tensor.ReduceOp{tensor.ReduceSum, tensor.ReduceMax, tensor.ReduceMin, tensor.ReduceArgMax, tensor.ReduceArgMin, tensor.ReduceLogSumExp}

var reduceNames = map[tensor.ReduceOp]string{
	tensor.ReduceSum: "Sum", tensor.ReduceMax: "Max", tensor.ReduceMin: "Min",
	tensor.ReduceArgMax: "ArgMax", tensor.ReduceArgMin: "ArgMin", tensor.ReduceLogSumExp: "LogSumExp",
}

// ReduceShapes are the shapes whose every dim the Reduce check reduces, on
// contiguous, strided and broadcast views: long rows, many outputs, few
// outputs over long strided lines, a single element, empty dims and
// several kept dims (a backend's tests may check that these reach each of
// its kernels).
var ReduceShapes = [][]int{
	{5, 7, 3},
	{4, 300},
	{3000, 5},
	{130, 3, 70},
	{5000, 3},
	{1, 1},
	{2, 0, 3},
	{9, 2, 3, 4, 2},
}

// reduceRef reduces the n values of x (a line of the input) as op does,
// returning the result (the index for ArgMax and ArgMin) and the error the
// backend may make.
func reduceRef(op tensor.ReduceOp, x []float32) (want, allowed float64) {
	n := len(x)
	switch op {
	case tensor.ReduceSum:
		// the contract: sums accumulate in float64, rounded once
		var s, abs float64
		for _, v := range x {
			s += float64(v)
			abs += math.Abs(float64(v))
		}
		return s, float64Err(n)*abs + u*math.Abs(s) + 0x1p-149
	case tensor.ReduceMax, tensor.ReduceMin:
		best := x[0]
		for _, v := range x[1:] {
			if v != v {
				return math.NaN(), 0
			}
			if (op == tensor.ReduceMax && v > best) || (op == tensor.ReduceMin && v < best) {
				best = v
			}
		}
		return float64(best), 0
	case tensor.ReduceArgMax, tensor.ReduceArgMin:
		// the first extreme, or the first NaN
		best, bi := x[0], 0
		for j := 1; j < n && best == best; j++ {
			v := x[j]
			if (op == tensor.ReduceArgMax && (v > best || v != v)) || (op == tensor.ReduceArgMin && (v < best || v != v)) {
				best, bi = v, j
			}
		}
		return float64(bi), 0
	case tensor.ReduceLogSumExp:
		if n == 0 {
			return math.Inf(-1), 0
		}
		m := math.Inf(-1)
		for _, v := range x {
			m = math.Max(m, float64(v))
		}
		if math.IsInf(m, 0) || m != m {
			return m, 0
		}
		var s float64
		for _, v := range x {
			s += math.Exp(float64(v) - m)
		}
		r := m + math.Log(s)
		// a float32 sum of the n exponentials (positive terms) is off by
		// γ_n relative, log turns that into an absolute error
		return r, elemRel*math.Abs(r) + sumErr(n)
	}
	panic("backendtest: unknown reduction")
}

// reduceLines returns the lines of view l of x along dim, one after the
// other in the order of the outputs: the view with dim moved last.
func reduceLines(x []float32, l tensor.Layout, dim int) []float32 {
	if len(l.Shape) == 1 && l.Strides[0] == 1 {
		return x[l.Offset : l.Offset+l.Shape[0]]
	}
	perm := tensor.Layout{Offset: l.Offset}
	for d := range l.Shape {
		if d != dim {
			perm.Shape, perm.Strides = append(perm.Shape, l.Shape[d]), append(perm.Strides, l.Strides[d])
		}
	}
	perm.Shape, perm.Strides = append(perm.Shape, l.Shape[dim]), append(perm.Strides, l.Strides[dim])
	return gatherView(x, perm)
}

// checkReduce runs op over dim of view l of src on b and checks every
// output against the reference over lines (reduceLines of the input).
func checkReduce(t testing.TB, b tensor.Backend, name string, op tensor.ReduceOp, src tensor.Storage, lines []float32, l tensor.Layout, dim int) {
	t.Helper()
	nout := numel(l.Shape) / max(l.Shape[dim], 1)
	if l.Shape[dim] == 0 {
		nout = 1
		for d, s := range l.Shape {
			if d != dim {
				nout *= s
			}
		}
	}
	n := l.Shape[dim]
	want, allowed := make([]float64, nout), make([]float64, nout)
	for k := range nout {
		want[k], allowed[k] = reduceRef(op, lines[k*n:(k+1)*n])
	}
	if op == tensor.ReduceArgMax || op == tensor.ReduceArgMin {
		dst := poisoned(b, tensor.Int64, nout)
		b.Reduce(op, dst, src, l, dim)
		wi := make([]int64, nout)
		for k, w := range want {
			wi[k] = int64(w)
		}
		checkInts(t, name, readInts(b, dst), wi)
		return
	}
	dst := poisoned(b, tensor.Float32, nout)
	b.Reduce(op, dst, src, l, dim)
	checkBound(t, name, read(b, dst), want, allowed)
}

// testReduce runs every reduction over every dim of random views of
// ReduceShapes, with ties (small integers), NaNs and infinities.
func testReduce(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, shape := range ReduceShapes {
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
				src := b.FromFloat32s(x)
				for dim := range shape {
					lines := reduceLines(x, v.l, dim)
					for _, op := range reduceOps {
						if shape[dim] == 0 && op != tensor.ReduceSum && op != tensor.ReduceLogSumExp {
							continue // package tensor rejects Max, Min, ArgMax of nothing
						}
						name := fmt.Sprintf("%s(dim %d)/%s %v special=%v", reduceNames[op], dim, kindNames[kind], v, special)
						checkReduce(t, b, name, op, src, lines, v.l, dim)
					}
				}
			}
		}
	}
}

// testReduceLengths reduces all n elements of a vector to one value, for n
// from 1 to 10^7 (odd sizes, sizes next to powers of two), as t.Sum() and
// ClipGradNorm do, and the columns of tall matrices (a bias gradient).
// Sums are held to the float64 bound, LogSumExp (up to 2^20+1 elements)
// to γ_n, the other reductions are exact.
// With -short the lengths stop at 2^20+1.
func testReduceLengths(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	ops := []tensor.ReduceOp{tensor.ReduceSum, tensor.ReduceMax, tensor.ReduceMin, tensor.ReduceArgMax, tensor.ReduceArgMin}
	for _, n := range []int{1, 2, 3, 63, 64, 65, 255, 257, 2047, 2049, 4095, 4097, 65537, 100003, 999983, 1<<20 + 1, 4_194_319, 10_000_000} {
		if testing.Short() && n > 1<<20+1 {
			break // -short: the long sums once, in the main run
		}
		x := randn(r, n)
		if n > 10 { // the extremes somewhere inside, once each
			x[r.IntN(n)] = 9
			x[r.IntN(n)] = -9
		}
		src := b.FromFloat32s(x)
		for _, op := range ops {
			checkReduce(t, b, fmt.Sprintf("%s of %d elements", reduceNames[op], n), op, src, x, whole(n), 0)
		}
		if n <= 1<<20+1 {
			checkReduce(t, b, fmt.Sprintf("LogSumExp of %d elements", n), tensor.ReduceLogSumExp, src, x, whole(n), 0)
		}
	}
	for _, rc := range [][2]int{{1024, 2304}, {999_983, 3}, {65, 129}} {
		rows, cols := rc[0], rc[1]
		x := randn(r, rows*cols)
		src := b.FromFloat32s(x)
		l := contiguous([]int{rows, cols})
		lines := reduceLines(x, l, 0)
		for _, op := range ops {
			checkReduce(t, b, fmt.Sprintf("%s over dim 0 of [%d %d]", reduceNames[op], rows, cols), op, src, lines, l, 0)
		}
	}
}

// testGlobalNorm checks the one-pass norm of many tensors (tensor.Normer,
// the kernel of ClipGradNorm) against a float64 sum of squares: tensors of
// one element, empty ones, sizes around 2^16 and GPT-2's.
func testGlobalNorm(t testing.TB, b tensor.Backend) {
	nb, ok := b.(tensor.Normer)
	if !ok {
		t.Logf("%s does not implement tensor.Normer: nothing to check", b.Device())
		return
	}
	r := NewRand(t)
	for _, sizes := range [][]int{{1}, {0, 3}, {768, 65536, 65537, 0, 5}, {2_359_296, 768, 3 * 768 * 768, 50257}, {1100 * 65536}} {
		var ss []tensor.Storage
		var sq float64
		n := 0
		// one random block, repeated: the values matter less than the sizes
		block := randn(r, 1<<16+7)
		for _, k := range sizes {
			x := make([]float32, k)
			for i := 0; i < k; i += len(block) {
				copy(x[i:], block)
			}
			for _, v := range x {
				sq += float64(v) * float64(v)
			}
			ss = append(ss, b.FromFloat32s(x))
			n += k
		}
		dst := poisoned(b, tensor.Float32, 1)
		nb.GlobalNorm(dst, ss, sizes)
		// the contract: squares summed in float64 (error ≤ n·2^-53·Σx²,
		// half that relative after the root), the root rounded once
		want := math.Sqrt(sq)
		checkBound(t, fmt.Sprintf("GlobalNorm of %v", sizes), read(b, dst), []float64{want}, []float64{float64Err(n)*want + 2*u*want})
	}
}
