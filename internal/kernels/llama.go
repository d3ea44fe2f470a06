package kernels

import "math"

// The row kernels of the Llama family's fused ops: the CPU backend's
// RMSNorm, Rotary and SwiGLU run them, and so does the fused decoding step
// of nn.Llama, which must give the backend's bits.

// RMSNormRow writes w ⊙ (x / √(mean(x²) + eps)) into dst (without the
// weight if w is nil) and returns the reciprocal root mean square. The sum
// of squares is float64 of float32 squares, rounded to float32 and then
// divided in float32, the epsilon added and the reciprocal square root
// taken as Square, Mean, AddScalar and Rsqrt round them one after another.
func RMSNormRow(dst, x, w []float32, eps float32) float32 {
	dst = dst[:len(x)]
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	ms := float32(sum) / float32(len(x))
	inv := float32(1 / math.Sqrt(float64(ms+eps)))
	if w == nil {
		for j, v := range x {
			dst[j] = v * inv
		}
		return inv
	}
	w = w[:len(x)]
	for j, v := range x {
		dst[j] = w[j] * (v * inv)
	}
	return inv
}

// RotaryRow writes x·cos + rotate_half(x)·sin into dst for one head x of
// len(x) features (even), cos and sin of its position (as long as x):
// rotate_half(x) = cat(−x₂, x₁) for the halves x₁, x₂ of x. Each product
// is rounded before the sum, as the composition rounds it.
func RotaryRow(dst, x, cos, sin []float32) {
	half := len(x) / 2
	dst, cos, sin = dst[:len(x)], cos[:len(x)], sin[:len(x)]
	for i := range half {
		x1, x2 := x[i], x[i+half]
		// the conversions keep the products from fusing
		dst[i] = float32(x1*cos[i]) + float32(-x2*sin[i])
		dst[i+half] = float32(x2*cos[i+half]) + float32(x1*sin[i+half])
	}
}

// Sigmoid32 is 1/(1+e^−x) computed in float64 and rounded once: the
// Sigmoid op's scalar function (SigmoidVec's vector kernels are within an
// ulp of it, not always equal).
func Sigmoid32(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }

// SwiGLU writes silu(gate)·up = gate·σ(gate)·up into dst, element by
// element, with sig as scratch for σ(gate) (all as long as dst): σ by
// SigmoidVec on its longest prefix, Sigmoid32 on the rest (the Sigmoid
// op's dense loop), then (gate·σ)·up rounded in that order.
func SwiGLU(dst, gate, up, sig []float32) {
	n := len(dst)
	gate, up, sig = gate[:n], up[:n], sig[:n]
	k := SigmoidVec(sig, gate)
	for i := k; i < n; i++ {
		sig[i] = Sigmoid32(gate[i])
	}
	for i := range dst {
		dst[i] = gate[i] * sig[i] * up[i]
	}
}
