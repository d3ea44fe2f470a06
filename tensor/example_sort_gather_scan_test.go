package tensor_test

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

func ExampleLinspace() {
	fmt.Println(tensor.Linspace(-1, 1, 5))
	// Output:
	// tensor([-1.0000, -0.5000,  0.0000,  0.5000,  1.0000])
}

func ExampleTensor_Sort() {
	x := tensor.New([]float32{3, 1, 2, 1}, 4)
	values, indices := x.Sort(0, false)
	fmt.Println(values)
	fmt.Println(indices)
	// Output:
	// tensor([1., 1., 2., 3.])
	// tensor([1, 3, 2, 0])
}

func ExampleTensor_TopK() {
	logits := tensor.New([]float32{0.1, 2.5, -1, 0.7, 1.9}, 1, 5)
	values, indices := logits.TopK(2, -1, true, true)
	fmt.Println(values)
	fmt.Println(indices)
	// Output:
	// tensor([[2.5000, 1.9000]])
	// tensor([[1, 4]])
}

func ExampleTensor_Gather() {
	x := tensor.New([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	index := tensor.FromInts([]int{2, 0, 1, 1}, 2, 2)
	fmt.Println(x.Gather(1, index))
	// Output:
	// tensor([[3., 1.],
	//         [5., 5.]])
}

func ExampleTensor_ScatterAdd() {
	counts := tensor.Zeros(4)
	ids := tensor.FromInts([]int{1, 3, 1, 1}, 4)
	fmt.Println(counts.ScatterAdd(0, ids, tensor.Ones(4)))
	// Output:
	// tensor([0., 3., 0., 1.])
}

func ExampleTensor_Cumsum() {
	x := tensor.New([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	fmt.Println(x.Cumsum(1))
	fmt.Println(x.Cumprod(0))
	// Output:
	// tensor([[ 1.,  3.,  6.],
	//         [ 4.,  9., 15.]])
	// tensor([[ 1.,  2.,  3.],
	//         [ 4., 10., 18.]])
}
