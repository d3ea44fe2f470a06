package main

import (
	"math"

	"github.com/wickml/wick/tensor"
)

// writeLlamaCases writes the cases of the Llama family's fused kernels
// (csrc/rmsnorm.cu, rotary.cu, swiglu.cu, gqa.cu) with the CPU backend's
// outputs (tensor/cpu_fused_llama.go).
func writeLlamaCases() {
	// RMSNorm: y, rstd, dx and dw (added to random values)
	for _, rc := range [][2]int{{3, 5}, {5, 300}, {300, 7}} {
		rows, cols := rc[0], rc[1]
		x, wv, g := randn(rows*cols, 2), randn(cols, 1), randn(rows*cols, 1)
		rn := c.(tensor.RMSNormer)
		y, rstd := c.Alloc(tensor.Float32, rows*cols), c.Alloc(tensor.Float32, rows)
		xs, ws := c.FromFloat32s(x), c.FromFloat32s(wv)
		rn.RMSNorm(y, rstd, xs, ws, rows, cols, 1e-6)
		dw0 := randn(cols, 1)
		dx, dw := c.Alloc(tensor.Float32, rows*cols), c.FromFloat32s(dw0)
		rn.RMSNormGrad(dx, dw, c.FromFloat32s(g), xs, rstd, ws, rows, cols)
		rec("rmsnorm", "rmsnorm", []int64{int64(rows), int64(cols)}, F(x), F(wv), F(c.Float32s(y, whole(rows*cols))),
			F(c.Float32s(rstd, whole(rows))), F(g), F(dw0), F(c.Float32s(dx, whole(rows*cols))), F(c.Float32s(dw, whole(cols))))
	}
	// rotary embeddings on [A, H, T, D] heads viewed in a [A, T, H, D]
	// storage at an offset, and the transpose
	for _, sh := range [][4]int{{1, 1, 1, 2}, {2, 3, 5, 8}, {1, 4, 9, 16}} {
		a, h, t, d := sh[0], sh[1], sh[2], sh[3]
		const off = 2
		x := randn(off+a*t*h*d, 1)
		cos, sin := randn(t*d, 1), randn(t*d, 1)
		l := tensor.Layout{Shape: []int{a, h, t, d}, Strides: []int{t * h * d, d, h * d, 1}, Offset: off}
		ro := c.(tensor.Rotator)
		for tr := range 2 {
			y := c.Alloc(tensor.Float32, a*h*t*d)
			ro.Rotary(y, c.FromFloat32s(x), l, c.FromFloat32s(cos), c.FromFloat32s(sin), tr == 1)
			rec("rotary", "rotary", []int64{int64(a), int64(h), int64(t), int64(d), int64(l.Strides[0]), int64(l.Strides[1]), int64(l.Strides[2]), off, int64(tr)},
				F(x), F(cos), F(sin), F(c.Float32s(y, whole(a*h*t*d))))
		}
	}
	// SwiGLU, with large and special gates
	for _, n := range []int{1, 9, 1000} {
		gate, up, g := randn(n, 4), randn(n, 1), randn(n, 1)
		if n >= 9 {
			copy(gate, []float32{-100, 100, -20, 20, 0, -1.2784645, 88, float32(math.Inf(1)), float32(math.Inf(-1))})
		}
		sw := c.(tensor.SwiGLUer)
		y, da, du := c.Alloc(tensor.Float32, n), c.Alloc(tensor.Float32, n), c.Alloc(tensor.Float32, n)
		gs, us := c.FromFloat32s(gate), c.FromFloat32s(up)
		sw.SwiGLU(y, gs, us, n)
		sw.SwiGLUGrad(da, du, c.FromFloat32s(g), gs, us, n)
		rec("swiglu", "swiglu", []int64{int64(n)}, F(gate), F(up), F(g), F(c.Float32s(y, whole(n))), F(c.Float32s(da, whole(n))), F(c.Float32s(du, whole(n))))
	}
	// the grouped-query attention softmax with an offset: p from the
	// CPU's GroupedAttention, the scores computed here; dS from the
	// reference formula
	for _, sh := range [][6]int{{1, 2, 2, 5, 0, 4}, {2, 6, 2, 3, 4, 8}, {1, 4, 1, 1, 7, 4}, {1, 3, 1, 40, 0, 8}} {
		b, h, hkv, t, offset, d := sh[0], sh[1], sh[2], sh[3], sh[4], sh[5]
		s, g := offset+t, h/hkv
		q, k, v := randn(b*h*t*d, 1), randn(b*hkv*s*d, 1), randn(b*hkv*s*d, 1)
		y, pr := c.Alloc(tensor.Float32, b*h*t*d), c.Alloc(tensor.Float32, b*h*t*s)
		kl := tensor.Layout{Shape: []int{b * hkv, s, d}, Strides: []int{s * d, d, 1}}
		c.(tensor.GroupedAttention).GroupedAttention(y, pr, c.FromFloat32s(q), c.FromFloat32s(k), kl, c.FromFloat32s(v), kl, b, h, hkv, t, s, d, offset)
		pv := c.Float32s(pr, whole(b*h*t*s))
		S := make([]float32, b*h*t*s)
		for bi := range b {
			for hi := range h {
				for i := range t {
					for j := range s {
						var sum float32
						for e := range d {
							sum += q[((bi*h+hi)*t+i)*d+e] * k[((bi*hkv+hi/g)*s+j)*d+e]
						}
						S[((bi*h+hi)*t+i)*s+j] = sum
					}
				}
			}
		}
		scale := float32(1 / math.Sqrt(float64(d)))
		dp := randn(b*h*t*s, 1)
		ds := make([]float32, len(dp))
		for row := range b * h * t {
			n := min(s, offset+row%t+1)
			var dot float64
			for j := range n {
				dot += float64(pv[row*s+j]) * float64(dp[row*s+j])
			}
			for j := range n {
				ds[row*s+j] = pv[row*s+j] * (dp[row*s+j] - float32(dot)) * scale
			}
		}
		rec("gqa", "gqa", []int64{int64(b * h * t), int64(t), int64(s), int64(offset)}, F([]float32{scale}), F(S), F(pv), F(dp), F(ds))
	}
}
