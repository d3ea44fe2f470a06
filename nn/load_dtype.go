package nn

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/wickml/wick/safetensors"

	"github.com/wickml/wick/tensor"
)

// LoadOptions are the choices of LoadCausalLMWith and LoadPretrainedWith.
// The zero value loads as LoadCausalLM and LoadPretrained do.
type LoadOptions struct {
	// DType is the dtype of the loaded parameters: Float32 (the zero
	// value), BFloat16 or Float16 (on the CPU, for inference: see
	// ToDType). Each tensor goes from the file's dtype straight into a
	// parameter of DType a chunk at a time, without a float32 copy of the
	// model: a BF16 file loaded as BFloat16 (or an F16 one as Float16)
	// keeps its values bit for bit, an F32 file is rounded to nearest
	// even tensor by tensor (a value that overflows, beyond 65504 for
	// Float16, is an error wrapping ErrNonFinite). The 16-bit parameters
	// do not require gradients (nn keeps 16-bit weights frozen: for
	// inference and as LoRA bases).
	DType tensor.DType
}

// check returns an error for a DType the models cannot load as.
func (o LoadOptions) check() error {
	switch o.DType {
	case tensor.Float32, tensor.BFloat16, tensor.Float16:
		return nil
	}
	return fmt.Errorf("dtype %s is not one of float32, bfloat16, float16", o.DType)
}

// LoadCausalLMWith is LoadCausalLM with opts: with DType BFloat16, for
// example, a BF16 checkpoint stays in bfloat16 (half the memory of
// float32, half the bytes read per generated token) while the forward
// passes compute in float32.
func LoadCausalLMWith(name string, opts LoadOptions) (CausalLM, error) {
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("nn: LoadCausalLM: %w", err)
	}
	dir, err := PretrainedDir(name)
	if err != nil {
		return nil, err
	}
	typ, err := readModelType(filepath.Join(dir, hfConfigFile))
	if err != nil {
		return nil, fmt.Errorf("nn: LoadCausalLM: %w", err)
	}
	var m CausalLM
	if typ == "" || typ == "gpt2" {
		m, err = loadPretrained(dir, opts.DType)
	} else {
		m, err = loadLlama(dir, opts.DType)
	}
	if err != nil {
		return nil, fmt.Errorf("nn: LoadCausalLM: %w", err)
	}
	return m, nil
}

// LoadPretrainedWith is LoadPretrained with opts (see LoadOptions).
func LoadPretrainedWith(name string, opts LoadOptions) (*GPT, error) {
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("nn: LoadPretrained: %w", err)
	}
	dir, err := PretrainedDir(name)
	if err != nil {
		return nil, err
	}
	g, err := loadPretrained(dir, opts.DType)
	if err != nil {
		return nil, fmt.Errorf("nn: LoadPretrained: %w", err)
	}
	return g, nil
}

// filler writes a loader's values into parameters and keeps the first
// overflow: a finite float32 value (the reader refuses others) that
// rounds to an infinity in a 16-bit parameter (beyond 65504 in float16).
type filler struct{ err error }

// set returns the chunk writer of param, read from s: SetFloat32s, with
// the values checked first when param is 16-bit.
func (f *filler) set(param *tensor.Tensor, s *safetensors.Ref) func(off int, v []float32) {
	var limit float32 // the smallest magnitude that rounds to an infinity
	switch param.DType() {
	case tensor.Float16:
		limit = 65520
	case tensor.BFloat16:
		limit = math.Float32frombits(0x7f7f8000)
	}
	return func(off int, v []float32) {
		if limit > 0 && f.err == nil {
			for i, x := range v {
				if x >= limit || x <= -limit {
					f.err = fmt.Errorf("%s: tensor %q: %w: element %d, %g, overflows %s; load it as float32 or bfloat16", s.File, s.Name, ErrNonFinite, off+i, x, param.DType())
					break
				}
			}
		}
		param.SetFloat32s(off, v)
	}
}

// zerosOf returns a zero parameter of dt for a loader to fill: a float32
// one requiring grad, or a 16-bit one allocated as such, once (the zeros
// like a broadcast view of one element: no float32 tensor of its size,
// no second buffer).
func zerosOf(dt tensor.DType, shape ...int) *tensor.Tensor {
	if dt == tensor.Float32 {
		return tensor.Zeros(shape...).RequiresGrad()
	}
	one := make([]int, len(shape))
	for i := range one {
		one[i] = 1
	}
	return tensor.ZerosLike(tensor.FromBits16(dt, []uint16{0}, one...).Expand(shape...))
}

// toDTypeSmall converts what the zero models build in float32 whatever
// the dtype (norm weights and biases, [N] vectors) to dt.
func toDTypeSmall(m Module, dt tensor.DType) {
	if dt != tensor.Float32 {
		ToDType(m, dt)
	}
}
