// Command broadcasting walks through creating tensors, views that share
// storage and NumPy-style broadcasting, the first steps of the notebook
// examples/wick.ipynb as a program.
//
//	go run ./examples/broadcasting
package main

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

func main() {
	// Creation: from data, ranges and random numbers.
	a := tensor.New([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	fmt.Println("a =", a)
	fmt.Println("shape", a.Shape(), "dtype", a.DType(), "device", a.Device())
	r := tensor.Arange(0, 12, 1).Reshape(3, 4)
	fmt.Println("r =", r)

	// Views share storage with their base: T and Select do not copy.
	fmt.Println("a.T() =", a.T())
	fmt.Println("row 1 of a:", a.Select(0, 1))

	// Broadcasting: a [2,3] matrix plus a [3] row, times a [2,1] column.
	row := tensor.New([]float32{10, 20, 30}, 3)
	col := tensor.New([]float32{1, -1}, 2, 1)
	fmt.Println("a + row =", a.Add(row))
	fmt.Println("(a + row) * col =", a.Add(row).Mul(col))
	// An outer product by broadcasting [3,1] against [1,4].
	fmt.Println("outer =", tensor.Arange(1, 4, 1).Unsqueeze(1).Mul(tensor.Arange(1, 5, 1).Unsqueeze(0)))

	// Reductions over a dimension or over everything.
	fmt.Println("sum over rows:", a.Sum(0))
	fmt.Println("mean of all:", a.Mean())
	fmt.Println("softmax of each row:", a.Softmax(1))

	// Matrix products follow torch.matmul: [2,3] @ [3,4] -> [2,4].
	fmt.Println("a @ r =", a.MatMul(r))
}
