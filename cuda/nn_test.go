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
			compare(t, name, gv, cv, cancelTol)

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

		dw := upload(g, c, randn(r, num*rowLen))
		src := upload(g, c, randn(r, n*rowLen))
		g.ScatterAdd(dw.g, ix.g, src.g, n, rowLen)
		c.ScatterAdd(dw.c, ix.c, src.c, n, rowLen)
		gv, cv = dw.read(g, c)
		compare(t, name+" grad", gv, cv, reduceTol)
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
