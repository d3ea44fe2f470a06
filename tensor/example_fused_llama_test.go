package tensor_test

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// Causal attention in which 4 query heads share 2 key/value heads, for 3
// new queries after 2 cached positions: each query sees the cached keys
// and itself, and none after it.
func ExampleCausalAttention() {
	q := tensor.Ones(1, 4, 3, 8)                                       // [B, H, T, D]
	k := tensor.Zeros(1, 2, 5, 8)                                      // [B, Hkv, offset+T, D]
	v := tensor.Arange(0, 5, 1).Reshape(1, 1, 5, 1).Expand(1, 2, 5, 8) // position j holds j
	y := tensor.CausalAttention(q, k, v, 2)
	// equal scores: each query averages the values it may see
	fmt.Println(y.Shape(), y.Select(1, 0).Select(2, 0).Float32s())
	// Output: [1 4 3 8] [1 1.5 2]
}

// RMSNorm scales each row to a root mean square of one, then by the weight.
func ExampleTensor_RMSNorm() {
	x := tensor.New([]float32{3, 4, 0, 0, -2, 2, 2, -2}, 2, 4)
	w := tensor.New([]float32{1, 1, 2, 2}, 4)
	fmt.Println(x.RMSNorm(w, 0).Float32s())
	// Output: [1.2 1.6 0 0 -1 1 2 -2]
}

// SwiGLU gates up by silu(gate) = gate·σ(gate).
func ExampleSwiGLU() {
	gate := tensor.New([]float32{0, 10, -10}, 3)
	up := tensor.New([]float32{5, 2, 2}, 3)
	fmt.Printf("%.4f\n", tensor.SwiGLU(gate, up).Float32s())
	// Output: [0.0000 19.9991 -0.0009]
}
