package tensor

// How the ops that are not elementwise compute on BFloat16 and Float16
// tensors (on the CPU): as PyTorch's CPU kernels for the 16-bit dtypes do,
// in float32 inside, rounding each result once. The reductions (Sum, Mean,
// Max, Min, Var, LogSumExp, ArgMax), Softmax and LogSoftmax, LayerNorm,
// CrossEntropy, the scans, Sort and the index ops widen their 16-bit input
// to float32 (exactly), run their float32 kernel and derivative, and round
// the float results once to the input's dtype; autograd sees the casts, so
// a gradient reaches a 16-bit input in its own dtype, rounded once from
// the float32 derivative. The elementwise ops compute in float32 and round
// once inside the CPU backend (cpu_elementwise.go); MatMul sums in float32
// (cpu_matmul16.go); the view and copy ops move bit patterns.

// widened returns f(t) for a 16-bit t computed on t's values in float32:
// f's float32 result is rounded once to t's dtype (an Int64 result, such
// as ArgMax's, is returned as it is). For a Float32 or Int64 t it is f(t).
func widened(t *Tensor, f func(x *Tensor) *Tensor) *Tensor {
	dt := t.DType()
	if !is16(dt) {
		return f(t)
	}
	out := f(t.ToDType(Float32))
	if out.DType() == Float32 {
		out = rounded16(out, dt)
	}
	return out
}

// rounded16 returns the float32 result out of an op rounded once to dt,
// printed with the op's grad_fn (SumBackward0, not the cast's).
func rounded16(out *Tensor, dt DType) *Tensor {
	name := out.name
	r := out.ToDType(dt)
	if r.requiresGrad && name != "" {
		r.name = name
	}
	return r
}

// widenedOrNil is t widened to float32 when it is 16-bit, t otherwise
// (nil stays nil).
func widenedOrNil(t *Tensor) *Tensor {
	if t == nil || !is16(t.DType()) {
		return t
	}
	return t.ToDType(Float32)
}
