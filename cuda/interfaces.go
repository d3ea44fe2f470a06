//go:build cuda

package cuda

import "github.com/wickml/wick/tensor"

// Compile-time checks that the CUDA backend implements tensor.Backend and
// each optional interface that package tensor looks for with a type
// assertion, so that a method whose signature drifts is a build error
// instead of a silent fall-back to the slow path (tensor/interfaces.go has
// the CPU backend's list).
var (
	_ tensor.Backend        = (*backend)(nil)
	_ tensor.FusedAttention = (*backend)(nil) // AttentionQKV
	_ tensor.Normer         = (*backend)(nil) // GlobalNorm, ClipGradNorm
	_ tensor.DropoutMasker  = (*backend)(nil) // Dropout
	_ tensor.Backend16      = (*backend)(nil) // 16-bit storages: To, Bits16, ToDType

	_ tensor.RMSNormer        = (*backend)(nil) // Tensor.RMSNorm
	_ tensor.Rotator          = (*backend)(nil) // ApplyRotary
	_ tensor.SwiGLUer         = (*backend)(nil) // SwiGLU
	_ tensor.GroupedAttention = (*backend)(nil) // CausalAttention

	// Release returns a storage's device memory to the allocator's cache
	// early (Tensor.Release).
	_ interface{ Release() } = (*storage)(nil)
)
