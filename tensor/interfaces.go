package tensor

// Compile-time checks that the CPU backend implements Backend and each
// optional interface that package tensor looks for with a type assertion,
// so that a method whose signature drifts is a build error instead of a
// silent fall-back to the slow path. The CUDA backend has the same list
// in cuda/interfaces.go.
var (
	_ Backend         = cpuBackend{}
	_ FusedAttention  = cpuBackend{} // AttentionQKV
	_ Normer          = cpuBackend{} // GlobalNorm
	_ uninitAllocator = cpuBackend{} // emptyOut
	_ Backend16       = cpuBackend{} // 16-bit storages: To, Bits16, ToDType

	_ AttentionRecomputer = cpuBackend{} // AttentionQKV
	_ RoundedAttention    = cpuBackend{} // AttentionQKV inside Autocast

	// the Llama family's fused layers (fused_llama.go)
	_ RMSNormer        = cpuBackend{} // Tensor.RMSNorm
	_ Rotator          = cpuBackend{} // ApplyRotary
	_ SwiGLUer         = cpuBackend{} // SwiGLU
	_ GroupedAttention = cpuBackend{} // CausalAttention

	_ GroupedAttentionRecomputer = cpuBackend{} // CausalAttention
	_ RoundedGroupedAttention    = cpuBackend{} // CausalAttention inside Autocast

	// Release returns a storage's memory early (Tensor.Release).
	_ interface{ Release() } = (*cpuStorage)(nil)
)
