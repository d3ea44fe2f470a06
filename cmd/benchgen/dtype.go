package main

import (
	"flag"
	"fmt"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// dtypeFlag is -dtype: the dtype of the model's weights (activations stay
// float32; see nn.ToDType).
var dtypeFlag = flag.String("dtype", "float32", "dtype of the weights: float32, bfloat16 or float16 (activations float32)")

// weightsToDType converts model's weights to -dtype and returns the bytes
// each of its elements takes.
func weightsToDType(model nn.Module) (int, error) {
	dt := map[string]tensor.DType{"float32": tensor.Float32, "bfloat16": tensor.BFloat16, "float16": tensor.Float16}
	d, ok := dt[*dtypeFlag]
	if !ok {
		return 0, fmt.Errorf("-dtype=%s: want float32, bfloat16 or float16", *dtypeFlag)
	}
	nn.ToDType(model, d)
	return d.ItemSize(), nil
}
