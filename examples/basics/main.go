// Command basics runs the README example: a linear layer with a ReLU,
// reduced to a scalar loss, differentiated with Backward, and the NoGrad
// block in which inference records nothing.
//
//	go run ./examples/basics
package main

import (
	"fmt"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

func main() {
	tensor.ManualSeed(1337)
	x := tensor.Randn(4, 8)
	w := tensor.Randn(8, 2).RequiresGrad()
	b := tensor.Zeros(2).RequiresGrad()
	loss := x.MatMul(w).Add(b).ReLU().Mean()
	loss.Backward()
	fmt.Println(w.Grad())
	autograd.NoGrad(func() { /* inference: nothing recorded */ })
}
