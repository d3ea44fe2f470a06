//go:build cuda

package cuda

import (
	"math"

	"github.com/wickml/wick/tensor"
)

// AdamW updates param, m and v in place from grad with PyTorch's rule; the
// scalars are formed as the CPU backend forms them.
func (b *backend) AdamW(param, grad, m, v tensor.Storage, n int, c tensor.AdamWStep) {
	const op = "AdamW"
	defer b.d.enter()()
	p, g, ms, vs := b.rows(op, param, n), b.rows(op, grad, n), b.rows(op, m, n), b.rows(op, v, n)
	defer keepAlive(p, g, ms, vs)
	bc1 := 1 - math.Pow(c.Beta1, float64(c.Step))
	bc2 := 1 - math.Pow(c.Beta2, float64(c.Step))
	a := &args{}
	a.ptr(p.ptr(op, 0)).ptr(g.ptr(op, 0)).ptr(ms.ptr(op, 0)).ptr(vs.ptr(op, 0)).i64(n)
	a.f32(float32(c.Beta1)).f32(float32(c.Beta2)).f32(float32(1 - c.Beta1)).f32(float32(1 - c.Beta2))
	a.f32(float32(c.LR / bc1)).f32(float32(math.Sqrt(bc2))).f32(float32(1 - c.LR*c.WeightDecay)).f32(float32(c.Eps))
	b.d.launch1D(op, b.d.k.adamw, n, a)
}
