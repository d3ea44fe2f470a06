package main

import (
	"errors"
	"fmt"

	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// weightDType returns the dtype that --dtype names for the weights of a
// sampled model: float32, bfloat16 or float16 (nanoGPT's spellings).
func weightDType(s string) (tensor.DType, error) {
	switch s {
	case "float32":
		return tensor.Float32, nil
	case "bfloat16":
		return tensor.BFloat16, nil
	case "float16":
		return tensor.Float16, nil
	}
	return 0, fmt.Errorf("--dtype=%s is not supported (want float32, bfloat16 or float16)", s)
}

// checkSampleDType refuses 16-bit weights where they cannot run yet: off
// the CPU. (A LoRA adapter on 16-bit weights stays float32.)
func checkSampleDType(o *options, dev tensor.Device) (tensor.DType, error) {
	dt, err := weightDType(o.Dtype)
	if err != nil || dt == tensor.Float32 {
		return dt, err
	}
	if dev != tensor.CPU {
		return 0, fmt.Errorf("--dtype=%s runs on the cpu only so far (got --device=%s); use --dtype=float32 or --device=cpu", o.Dtype, dev)
	}
	return dt, nil
}

// trainDType returns the dtype that --dtype names for training on dev:
// Float32, or BFloat16 or Float16 for autocast (tensor.Autocast: the
// products on 16-bit operands with float32 sums, the rest, the weights,
// gradients and AdamW state in float32). bfloat16 trains on the cpu and
// on cuda; float16, which needs loss scaling (optim.GradScaler,
// newScaler), on cuda only: it is refused on the cpu, as PyTorch's cpu
// autocast has no float16.
func trainDType(o *options, dev tensor.Device) (tensor.DType, error) {
	dt, err := weightDType(o.Dtype)
	switch {
	case err != nil || dt == tensor.Float32:
		return dt, err
	case dt == tensor.Float16 && dev == tensor.CPU:
		return 0, errors.New("--dtype=float16 does not train on the cpu (float16 needs loss scaling, for cuda); use --dtype=bfloat16 or float32")
	case dev != tensor.CPU && dev.Kind != tensor.KindCUDA:
		return 0, fmt.Errorf("--dtype=%s trains on the cpu and cuda only (autocast has no 16-bit products on %s); use --dtype=float32", o.Dtype, dev)
	}
	return dt, nil
}

// newScaler returns the dynamic loss scaler of a run in dt: PyTorch's
// torch.cuda.amp.GradScaler defaults for float16 (scale 2¹⁶, halved after
// a step with inf/NaN gradients, which is skipped, doubled after 2000
// steps without), nil for the other dtypes, which need none.
func newScaler(dt tensor.DType) *optim.GradScaler {
	if dt != tensor.Float16 {
		return nil
	}
	return optim.NewGradScaler(optim.GradScalerConfig{})
}

// autocast runs f, a forward pass and its loss, in the run's dtype:
// inside tensor.Autocast for bfloat16 and float16, as nanoGPT's ctx.
func (t *trainer) autocast(f func()) {
	if t.dt == tensor.Float32 || t.dt == 0 {
		f()
		return
	}
	tensor.Autocast(t.dt, f)
}
