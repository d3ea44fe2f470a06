package nn

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// ToDType converts the parameters of m to dt in one call, like PyTorch's
// module.to(dtype) for floating-point parameters: every floating-point
// parameter its exported fields reach (as To finds them) is replaced by its
// copy in dt, rounded to nearest even (tensor.Tensor.ToDType); buffers
// (GPT's causal mask, rotary tables) and Int64 tensors stay as they are.
// Tied parameters (GPT's lm_head and wte) stay one tensor. A converted
// parameter is a new tensor, detached; a float32 one requires grad when
// the original did, a 16-bit one does not (nn keeps 16-bit weights
// frozen: for inference and as LoRA bases) and its gradient is dropped.
//
// The models take bfloat16 and float16 weights for inference on the CPU:
// activations stay float32 (nn.Linear sums in float32 and returns float32
// for float32 inputs; LayerNorm and RMSNorm keep their statistics in
// float32 and multiply by the weight widened to the input's dtype, Hugging
// Face's weight * x_normed order), so the weights take half the bytes and
// each generated token reads half as many. Training a converted model is
// not supported yet (use float32 parameters).
//
// ToDType panics with a *tensor.Error if dt is not Float32, BFloat16 or
// Float16, if a 16-bit dtype is asked for a module off the CPU, or like To
// if a parameter stays behind.
func ToDType(m Module, dt tensor.DType) {
	const op = "ToDType"
	if dt != tensor.Float32 && dt != tensor.BFloat16 && dt != tensor.Float16 {
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("want float32, bfloat16 or float16, got %s", dt)})
	}
	checkModule(op, m)
	isParam := map[*tensor.Tensor]bool{}
	for _, p := range m.NamedParameters() {
		isParam[p.Param] = true
		if dt != tensor.Float32 && p.Param.Device() != tensor.CPU {
			panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("%s weights are supported on the cpu only for now, parameter %q is on %s", dt, p.Name, p.Param.Device())})
		}
	}
	converted := false
	moveModule(op, m, func(t *tensor.Tensor) *tensor.Tensor {
		if !isParam[t] || !t.DType().IsFloatingPoint() || t.DType() == dt {
			return t
		}
		converted = true
		return t.Detach().ToDType(dt)
	})
	if converted { // new storages; the others were advised when made
		adviseHugePages(m)
	}
}

// ParameterBytes returns the bytes m's parameters take, tied tensors
// counted once: ParameterCount times the element size for float32
// parameters, half that for bfloat16 or float16 ones. It panics like
// ParameterCount.
func ParameterBytes(m Module) int64 {
	checkModule("ParameterBytes", m)
	var n int64
	for _, p := range m.Parameters() {
		n += int64(p.Numel()) * int64(p.DType().ItemSize())
	}
	return n
}

// activation returns x as the float32 activations the models compute in:
// the rows a bfloat16 or float16 embedding table returns, widened exactly;
// x itself otherwise.
func activation(x *tensor.Tensor) *tensor.Tensor {
	if dt := x.DType(); dt == tensor.BFloat16 || dt == tensor.Float16 {
		return x.ToDType(tensor.Float32)
	}
	return x
}

// embedAdd returns GPT's token plus position embeddings, wte(idx) +
// wpe(pos), in float32 whatever the tables' dtype.
func embedAdd(wte, wpe *Embedding, idx, pos *tensor.Tensor) *tensor.Tensor {
	return activation(wte.Forward(idx)).Add(activation(wpe.Forward(pos)))
}

// asDTypeOf returns p (a norm's weight or bias, or nil) in x's dtype: a
// bfloat16 weight widened exactly for float32 activations.
func asDTypeOf(p, x *tensor.Tensor) *tensor.Tensor {
	if p == nil {
		return nil
	}
	return p.ToDType(x.DType())
}

// rowsMatMul16 returns x [N, K] · w [K, M] for a bfloat16 or float16 w,
// each row of x multiplied alone, so that a row's result does not depend
// on the rows batched with it (what MatMulRowInvariant guarantees for
// float32 weights).
func rowsMatMul16(x, w *tensor.Tensor) *tensor.Tensor {
	n := x.Size(0)
	if n == 1 {
		return x.MatMul(w)
	}
	rows := make([]*tensor.Tensor, n)
	for i := range rows {
		rows[i] = x.Slice(0, i, i+1).MatMul(w)
	}
	return tensor.Cat(rows, 0)
}
