package tensor_test

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// A language model's head and loss in one: the mean cross-entropy of the
// logits x·weightᵀ, never held whole, and its gradients.
func ExampleLinearCrossEntropy() {
	x := tensor.Ones(3, 2).RequiresGrad()                             // [N, C] hidden states
	w := tensor.New([]float32{1, 0, 0, 1, 1, 1}, 3, 2).RequiresGrad() // [V, C] head weights
	targets := tensor.FromInts([]int{2, 0, -1}, 3)                    // -1: ignored
	loss := tensor.LinearCrossEntropy(x, w, targets, -1)
	loss.Backward()
	fmt.Printf("loss %.4f, weight gradient %v\n", loss.Item(), w.Grad().Shape())
	// Output: loss 1.0514, weight gradient [3 2]
}
