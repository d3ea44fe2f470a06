package tensor

import (
	"fmt"
	"math"
	"testing"
)

// lnCase is one LayerNorm run of the CPU backend: its forward outputs and
// its gradients for a fixed upstream gradient.
type lnCase struct {
	y, mean, rstd, dx, dw, db []float32
}

// runLayerNorm runs cpuBackend.LayerNorm and LayerNormGrad on x (rows×cols)
// with the weight w and bias b (either may be nil), with the fast kernels
// or the reference loops. dw and db start at 0.5 and −0.25, since the
// backend adds into them. Its callers are exclusive (forEachPath).
func runLayerNorm(fast bool, x, g, w, b []float32, rows, cols int) lnCase {
	defer func(f bool) { layerNormFast = f }(layerNormFast)
	layerNormFast = fast
	opt := func(v []float32) Storage {
		if v == nil {
			return nil
		}
		return &cpuStorage{f: v}
	}
	n := rows * cols
	c := lnCase{y: make([]float32, n), mean: make([]float32, rows), rstd: make([]float32, rows),
		dx: make([]float32, n), dw: make([]float32, cols), db: make([]float32, cols)}
	for i := range c.dw {
		c.dw[i], c.db[i] = 0.5, -0.25
	}
	cpu.LayerNorm(&cpuStorage{f: c.y}, &cpuStorage{f: c.mean}, &cpuStorage{f: c.rstd}, &cpuStorage{f: x}, opt(w), opt(b), rows, cols, 1e-5)
	cpu.LayerNormGrad(&cpuStorage{f: c.dx}, &cpuStorage{f: c.dw}, &cpuStorage{f: c.db}, &cpuStorage{f: g}, &cpuStorage{f: x},
		&cpuStorage{f: c.mean}, &cpuStorage{f: c.rstd}, opt(w), rows, cols)
	return c
}

// TestLayerNormKernels checks the LayerNorm row kernels (AVX-512, AVX2 and
// the Go loops, each path the machine runs) against the float64 reference
// loops of cpuBackend.LayerNorm and LayerNormGrad on fresh random rows of
// ragged lengths (the 16- and 8-wide blocks and the Go tail each take part),
// with and without bias, with rows whose mean is far larger than their
// spread, and with rows holding a NaN or an infinity (NaN must meet NaN). The forward must agree to 1e-6 relative, the backward to 1e-5:
// both compute in float64 and differ only in the order of their additions.
func TestLayerNormKernels(t *testing.T) {
	forEachPath(t, func(asm string) {
		gen := NewGenerator(31)
		for _, cols := range []int{1, 7, 8, 16, 17, 24, 33, 384, 768, 1023} {
			for _, s := range []struct {
				rows                int
				off, bias, specials bool
			}{{1, false, true, false}, {5, false, true, false}, {3, true, true, false}, {4, false, false, false}, {3, false, true, true}} {
				mk := func(k int, off, scale float64) []float32 {
					v := make([]float32, k)
					for i := range v {
						v[i] = float32(gen.NormFloat64()*scale + off)
					}
					return v
				}
				off := 0.3
				if s.off {
					off = 1000
				}
				n := s.rows * cols
				x, g, w := mk(n, off, 2), mk(n, 0, 1), mk(cols, 1, 0.5)
				var b []float32
				if s.bias {
					b = mk(cols, 0, 1)
				}
				if s.specials { // a NaN in row 0, an infinity in row 1, row 2 finite
					x[gen.IntN(cols)] = float32(math.NaN())
					x[cols+gen.IntN(cols)] = float32(math.Inf(1))
				}
				want := runLayerNorm(false, x, g, w, b, s.rows, cols)
				got := runLayerNorm(true, x, g, w, b, s.rows, cols)
				name := fmt.Sprintf("%s: %dx%d (offset %v, bias %v, NaN and Inf %v)", asm, s.rows, cols, off, s.bias, s.specials)
				for _, c := range []struct {
					what      string
					got, want []float32
					tol       float64
				}{
					{"y", got.y, want.y, 1e-6}, {"mean", got.mean, want.mean, 1e-6}, {"rstd", got.rstd, want.rstd, 1e-6},
					{"dx", got.dx, want.dx, 1e-5}, {"dw", got.dw, want.dw, 1e-5}, {"db", got.db, want.db, 1e-5},
				} {
					for i := range c.want {
						if g, w := c.got[i], c.want[i]; g != g && w != w || math.IsInf(float64(w), 0) && g == w {
							continue // NaN where the reference has NaN, or the same infinity
						}
						if d := math.Abs(float64(c.got[i]) - float64(c.want[i])); !(d <= c.tol*(1+math.Abs(float64(c.want[i])))) {
							t.Fatalf("%s: %s[%d] = %v, reference %v", name, c.what, i, c.got[i], c.want[i])
						}
					}
				}
			}
		}
	})
}

// TestLayerNormKernelsStrided runs Tensor.LayerNorm forward and backward on
// a transposed input and a strided weight (a column of a matrix) on each
// kernel path, and compares the results and gradients with the same
// computation on contiguous copies through the reference loops.
func TestLayerNormKernelsStrided(t *testing.T) {
	forEachPath(t, func(asm string) {
		for _, cols := range []int{17, 768} {
			gen := NewGenerator(uint64(cols))
			const rows = 6
			xt := gen.Randn(cols, rows)
			wm := gen.Randn(cols, 3)
			b := gen.Randn(cols)
			up := gen.Randn(rows, cols)
			run := func(fast bool, contiguous bool) (y, dx, dw, db []float32) {
				defer func(f bool) { layerNormFast = f }(layerNormFast)
				layerNormFast = fast
				x := xt.Detach().T() // rows×cols, strides (1, rows)
				w := wm.Detach().Select(1, 1)
				if contiguous {
					x, w = x.Contiguous(), w.Contiguous()
				}
				bb := b.Detach()
				x.RequiresGrad()
				w.RequiresGrad()
				bb.RequiresGrad()
				out := x.LayerNorm(w, bb, 1e-5)
				out.BackwardWith(up)
				return out.Float32s(), x.Grad().Float32s(), w.Grad().Float32s(), bb.Grad().Float32s()
			}
			if x := xt.T(); x.IsContiguous() {
				t.Fatalf("the strided input is contiguous")
			}
			gy, gdx, gdw, gdb := run(true, false)
			wy, wdx, wdw, wdb := run(false, true)
			for k, pair := range [][2][]float32{{gy, wy}, {gdx, wdx}, {gdw, wdw}, {gdb, wdb}} {
				for i := range pair[1] {
					if d := math.Abs(float64(pair[0][i]) - float64(pair[1][i])); d > 1e-5*(1+math.Abs(float64(pair[1][i]))) {
						t.Fatalf("%s: %dx%d: output %d element %d = %v, reference %v", asm, rows, cols, k, i, pair[0][i], pair[1][i])
					}
				}
			}
		}
	})
}
