//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
)

// rowShapes are the (rows, cols) the row kernels are tested with: one
// element, fewer columns than threads, several threads' worth, a vocabulary
// row, and more rows than one grid holds.
var rowShapes = [][2]int{{1, 1}, {3, 5}, {7, 256}, {5, 1000}, {2, 50257}, {70000, 3}}

// softmaxRef is softmax (or log-softmax) of each row as csrc/softmax.cu
// documents it, with the sum in float64: m = max(x) (0 for an all −Inf
// row), e_j = exp(x_j − m), y_j = e_j / Σe or x_j − m − log Σe.
func softmaxRef(x []float32, rows, cols int, log bool) []float32 {
	y := make([]float32, len(x))
	for r := range rows {
		xr, yr := x[r*cols:(r+1)*cols], y[r*cols:(r+1)*cols]
		m := float32(math.Inf(-1))
		for _, v := range xr {
			m = max(m, v)
		}
		if math.IsInf(float64(m), -1) {
			m = 0
		}
		var sum float64
		for _, v := range xr {
			sum += math.Exp(float64(v - m))
		}
		ls := float32(math.Log(sum))
		for j, v := range xr {
			if log {
				yr[j] = v - m - ls
			} else {
				yr[j] = float32(float64(float32(math.Exp(float64(v-m)))) / sum)
			}
		}
	}
	return y
}

// cpuSoftmaxTol is the tolerance of the CPU's softmax over rows of cols
// elements against softmaxRef. The CPU sums the exponentials in float32
// (like PyTorch's CPU kernel), which may be off by γ_cols = cols·u/(1 −
// cols·u), u = 2^-24, relative to the sum: softmax's outputs carry that
// relative error, log-softmax's the same amount as an absolute error (log
// of the sum). The GPU sums in double and is held to the fixed tolerance;
// holding the CPU to it made 2×50257 rows fail now and then.
func cpuSoftmaxTol(cols int, log bool) tol {
	gamma := float64(cols) * 0x1p-24 / (1 - float64(cols)*0x1p-24)
	if log {
		return tol{cancelTol.rel, cancelTol.abs + gamma}
	}
	return tol{cancelTol.rel + gamma, cancelTol.abs}
}

func TestSoftmax(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for _, rc := range rowShapes {
		rows, cols := rc[0], rc[1]
		n := rows * cols
		x := randn(r, n)
		for i := range x {
			x[i] *= 4
			if r.IntN(10) == 0 {
				x[i] = float32(math.Inf(-1)) // masked, as in causal attention
			}
		}
		if rows > 1 { // a fully masked row
			for j := range cols {
				x[cols+j] = float32(math.Inf(-1))
			}
		}
		src := upload(g, c, x)
		for _, log := range []bool{false, true} {
			name := fmt.Sprintf("%s %dx%d", opName("Softmax", log), rows, cols)
			y := poisoned(g, c, tensor.Float32, n)
			g.Softmax(y.g, src.g, rows, cols, log)
			c.Softmax(y.c, src.c, rows, cols, log)
			gv, cv := y.read(g, c)
			want := softmaxRef(x, rows, cols, log)
			compare(t, name+" (GPU)", gv, want, cancelTol)
			compare(t, name+" (CPU)", cv, want, cpuSoftmaxTol(cols, log))

			// backward from the CPU's y, so both sides see the same input
			ys := upload(g, c, cv)
			gs := upload(g, c, randn(r, n))
			dx := poisoned(g, c, tensor.Float32, n)
			g.SoftmaxGrad(dx.g, gs.g, ys.g, rows, cols, log)
			c.SoftmaxGrad(dx.c, gs.c, ys.c, rows, cols, log)
			gv, cv = dx.read(g, c)
			compare(t, name+" grad", gv, cv, reduceTol)
		}
	}
}

func TestLayerNorm(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for _, rc := range rowShapes {
		rows, cols := rc[0], rc[1]
		if rows*cols > 200000 {
			rows = 200000 / cols
		}
		n := rows * cols
		x := randn(r, n)
		for i := range x {
			x[i] = x[i]*3 + 1
		}
		if cols == 256 { // |mean| ≫ std: the backward needs the mean in double
			for i := range x {
				x[i] = 1000 + x[i]/300
			}
		}
		xs := upload(g, c, x)
		for _, affine := range []bool{false, true} {
			var w, b pair
			if affine {
				w, b = upload(g, c, randn(r, cols)), upload(g, c, randn(r, cols))
			}
			name := fmt.Sprintf("LayerNorm %dx%d affine=%v", rows, cols, affine)
			y, mean, rstd := poisoned(g, c, tensor.Float32, n), poisoned(g, c, tensor.Float32, rows), poisoned(g, c, tensor.Float32, rows)
			g.LayerNorm(y.g, mean.g, rstd.g, xs.g, w.g, b.g, rows, cols, 1e-5)
			c.LayerNorm(y.c, mean.c, rstd.c, xs.c, w.c, b.c, rows, cols, 1e-5)
			for _, o := range []struct {
				what string
				p    pair
			}{{"y", y}, {"mean", mean}, {"rstd", rstd}} {
				gv, cv := o.p.read(g, c)
				compare(t, name+" "+o.what, gv, cv, reduceTol)
			}

			// backward from the CPU's mean and rstd; dw and db add into
			// their previous values
			_, mv := mean.read(g, c)
			_, rv := rstd.read(g, c)
			ms, rs := upload(g, c, mv), upload(g, c, rv)
			gs := upload(g, c, randn(r, n))
			dx := poisoned(g, c, tensor.Float32, n)
			var dw, db pair
			if affine {
				dw, db = upload(g, c, randn(r, cols)), upload(g, c, randn(r, cols))
			}
			g.LayerNormGrad(dx.g, dw.g, db.g, gs.g, xs.g, ms.g, rs.g, w.g, rows, cols)
			c.LayerNormGrad(dx.c, dw.c, db.c, gs.c, xs.c, ms.c, rs.c, w.c, rows, cols)
			gv, cv := dx.read(g, c)
			compare(t, name+" dx", gv, cv, reduceTol)
			if affine {
				gv, cv = dw.read(g, c)
				compare(t, name+" dw", gv, cv, reduceTol)
				gv, cv = db.read(g, c)
				compare(t, name+" db", gv, cv, reduceTol)
			}
		}
	}
}

// TestLayerNormGradWeightsOnly checks dw and db without dx (a frozen input).
func TestLayerNormGradWeightsOnly(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	rows, cols := 4097, 384
	n := rows * cols
	xs, gs := upload(g, c, randn(r, n)), upload(g, c, randn(r, n))
	ms, rs := upload(g, c, randn(r, rows)), upload(g, c, randIn(r, rows, 0.5, 2))
	dw, db := poisoned(g, c, tensor.Float32, cols), poisoned(g, c, tensor.Float32, cols)
	for _, p := range []pair{dw, db} {
		g.Fill(p.g, whole(cols), 0)
		c.Fill(p.c, whole(cols), 0)
	}
	g.LayerNormGrad(nil, dw.g, db.g, gs.g, xs.g, ms.g, rs.g, nil, rows, cols)
	c.LayerNormGrad(nil, dw.c, db.c, gs.c, xs.c, ms.c, rs.c, nil, rows, cols)
	gv, cv := dw.read(g, c)
	compare(t, "dw", gv, cv, reduceTol)
	gv, cv = db.read(g, c)
	compare(t, "db", gv, cv, reduceTol)
}

func TestEmbedding(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for _, sz := range [][3]int{{1, 1, 1}, {65, 200, 384}, {50257, 64, 8}, {10, 3000, 1}} {
		num, n, rowLen := sz[0], sz[1], sz[2]
		idx := make([]int64, n)
		for i := range idx {
			idx[i] = int64(r.IntN(num))
		}
		if n > 3 {
			idx[1], idx[2] = idx[0], idx[0] // repeated rows add up
		}
		ix := uploadInts(g, c, idx)
		table := upload(g, c, randn(r, num*rowLen))
		name := fmt.Sprintf("Embedding %d rows of %d, %d lookups", num, rowLen, n)
		out := poisoned(g, c, tensor.Float32, n*rowLen)
		g.Gather(out.g, table.g, ix.g, n, rowLen)
		c.Gather(out.c, table.c, ix.c, n, rowLen)
		gv, cv := out.read(g, c)
		compare(t, name, gv, cv, tol{0, 0})

		dw0, grad := randn(r, num*rowLen), randn(r, n*rowLen)
		dw, src := upload(g, c, dw0), upload(g, c, grad)
		g.ScatterAdd(dw.g, ix.g, src.g, n, rowLen)
		c.ScatterAdd(dw.c, ix.c, src.c, n, rowLen)
		gv, cv = dw.read(g, c)
		want, bound := scatterAddExact(dw0, idx, grad, rowLen)
		compareSums(t, name+" grad (GPU)", gv, want, bound)
		compareSums(t, name+" grad (CPU)", cv, want, bound)
	}
}

// scatterAddExact returns dst with rows idx[i] += src[i, :] summed in
// float64, and for each element the most that a float32 sum of the same
// terms in any order can differ from it: γ_m·Σ|terms| with m the number of
// terms and γ_m = m·u/(1−m·u), u = 2^-24 (Higham, Accuracy and Stability
// of Numerical Algorithms, §4.2). The GPU's float atomicAdds land in an
// order that changes from run to run (and under the emulator's
// WICKEMU_SEED); when a row's sum is near zero its error stays a fraction
// of Σ|terms| but is far above any tolerance relative to the sum itself.
func scatterAddExact(dst []float32, idx []int64, src []float32, rowLen int) (want []float32, bound []float64) {
	sum := make([]float64, len(dst))
	abs := make([]float64, len(dst))
	terms := make([]int, len(dst))
	for i, v := range dst {
		sum[i], abs[i], terms[i] = float64(v), math.Abs(float64(v)), 1
	}
	for i, row := range idx {
		for j := range rowLen {
			e := int(row)*rowLen + j
			v := float64(src[i*rowLen+j])
			sum[e] += v
			abs[e] += math.Abs(v)
			terms[e]++
		}
	}
	want = make([]float32, len(dst))
	bound = make([]float64, len(dst))
	for i := range dst {
		want[i] = float32(sum[i])
		m := float64(terms[i]) * 0x1p-24
		// the float32 sum's error, plus rounding the float64 sum to want
		bound[i] = m/(1-m)*abs[i] + 0x1p-24*math.Abs(sum[i])
	}
	return want, bound
}

// compareSums fails t where |got − want| > bound.
func compareSums(t testing.TB, what string, got, want []float32, bound []float64) {
	t.Helper()
	bad := 0
	for i := range want {
		if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= bound[i]) {
			if bad < 5 {
				t.Errorf("%s: element %d: got %v, want %v ± %.3g", what, i, got[i], want[i], bound[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(want))
	}
}

// TestEmbeddingBadIndex checks that an index outside the table is never
// read: the gathered row is NaN, the scatter skips it.
func TestEmbeddingBadIndex(t *testing.T) {
	g, _ := gpu(t)
	table := g.FromFloat32s([]float32{1, 2, 3, 4})
	ix := g.FromInt64s([]int64{1, 2, -1})
	out := g.Alloc(tensor.Float32, 6)
	g.Gather(out, table, ix, 3, 2)
	got := g.Float32s(out, whole(6))
	if got[0] != 3 || got[1] != 4 || !math.IsNaN(float64(got[2])) || !math.IsNaN(float64(got[5])) {
		t.Errorf("Gather with bad indices: got %v, want [3 4 NaN NaN NaN NaN]", got)
	}
	g.ScatterAdd(table, ix, g.FromFloat32s([]float32{10, 10, 20, 20, 30, 30}), 3, 2)
	if got := g.Float32s(table, whole(4)); got[0] != 1 || got[1] != 2 || got[2] != 13 || got[3] != 14 {
		t.Errorf("ScatterAdd with bad indices: got %v, want [1 2 13 14]", got)
	}
}

func TestCrossEntropy(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for _, rc := range rowShapes {
		rows, cols := rc[0], rc[1]
		if rows*cols > 300000 {
			rows = 300000 / cols
		}
		n := rows * cols
		x := randn(r, n)
		for i := range x {
			x[i] *= 3
		}
		tg := make([]int64, rows)
		for i := range tg {
			tg[i] = int64(r.IntN(cols))
			if r.IntN(5) == 0 {
				tg[i] = -1 // ignored
			}
		}
		xs, ts := upload(g, c, x), uploadInts(g, c, tg)
		name := fmt.Sprintf("CrossEntropy %dx%d", rows, cols)
		loss := poisoned(g, c, tensor.Float32, rows)
		g.CrossEntropy(loss.g, xs.g, ts.g, rows, cols, -1)
		c.CrossEntropy(loss.c, xs.c, ts.c, rows, cols, -1)
		// The CPU sums a row's exponentials in float32 (tensor/cpu_fast.go),
		// a few 1e-6 relative over a 50257-wide row; the GPU sums in double.
		// A loss near zero is logsumexp − x[target] with both near the
		// row's maximum (|x| up to ~15 here): the CPU's float32 rounding of
		// the two, a few 1e-7 (seen on the emulated device), is the floor.
		ceTol := tol{1e-4, 2e-6}
		gv, cv := loss.read(g, c)
		compare(t, name, gv, cv, ceTol)

		dx := poisoned(g, c, tensor.Float32, n)
		scale := float32(1) / float32(rows)
		g.CrossEntropyGrad(dx.g, xs.g, ts.g, rows, cols, -1, scale)
		c.CrossEntropyGrad(dx.c, xs.c, ts.c, rows, cols, -1, scale)
		gv, cv = dx.read(g, c)
		compare(t, name+" grad", gv, cv, ceTol)
	}
}

func TestAdamW(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	n := 100003
	p, m, v := upload(g, c, randn(r, n)), upload(g, c, make([]float32, n)), upload(g, c, make([]float32, n))
	for step := 1; step <= 5; step++ {
		grad := upload(g, c, randn(r, n))
		cfg := tensor.AdamWStep{LR: 1e-3 * float64(step), Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1, Step: step}
		g.AdamW(p.g, grad.g, m.g, v.g, n, cfg)
		c.AdamW(p.c, grad.c, m.c, v.c, n, cfg)
		for _, o := range []struct {
			what string
			s    pair
		}{{"param", p}, {"m", m}, {"v", v}} {
			gv, cv := o.s.read(g, c)
			compare(t, fmt.Sprintf("AdamW step %d %s", step, o.what), gv, cv, elementwiseTol)
		}
	}
}
