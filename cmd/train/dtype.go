package main

import (
	"fmt"

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
