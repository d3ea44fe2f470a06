package tensor_test

import (
	"fmt"
	"slices"
	"sync"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// The README example: a linear layer with a ReLU, reduced to a scalar loss
// and differentiated.
func Example() {
	tensor.ManualSeed(1337)
	x := tensor.Randn(4, 8)
	w := tensor.Randn(8, 2).RequiresGrad()
	b := tensor.Zeros(2).RequiresGrad()
	loss := x.MatMul(w).Add(b).ReLU().Mean()
	loss.Backward()
	fmt.Println(w.Grad())
	// Output:
	// tensor([[ 0.3797,  0.3797],
	//         [ 0.2845,  0.2845],
	//         [-0.0652, -0.0652],
	//         [-0.0158, -0.0158],
	//         [-0.7133, -0.7133],
	//         [ 0.3986,  0.3986],
	//         [ 0.2345,  0.2345],
	//         [ 0.0398,  0.0398]])
}

func ExampleNew() {
	x := tensor.New([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	fmt.Println(x)
	fmt.Println(x.Shape(), x.Strides(), x.DType())
	// Output:
	// tensor([[1., 2., 3.],
	//         [4., 5., 6.]])
	// [2 3] [3 1] float32
}

func ExampleTensor_MatMul() {
	a := tensor.New([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := tensor.New([]float32{1, 0, 0, 1, 1, 1}, 3, 2)
	fmt.Println(a.MatMul(b))

	// batch dims broadcast: [2, 1, 2, 3] · [4, 3, 5] → [2, 4, 2, 5]
	c := tensor.Ones(2, 1, 2, 3).MatMul(tensor.Ones(4, 3, 5))
	fmt.Println(c.Shape())
	// Output:
	// tensor([[ 4.,  5.],
	//         [10., 11.]])
	// [2 4 2 5]
}

func ExampleTensor_Sum() {
	x := tensor.Arange(0, 6, 1).Reshape(2, 3)
	fmt.Println(x.Sum())
	fmt.Println(x.Sum(0))
	fmt.Println(x.SumKeepDim(1))
	// Output:
	// tensor(15.)
	// tensor([3., 5., 7.])
	// tensor([[ 3.],
	//         [12.]])
}

func ExampleTensor_Backward() {
	x := tensor.New([]float32{1, 2, 3}).RequiresGrad()
	y := x.Mul(x).Sum() // Σ x², whose gradient is 2x
	y.Backward()
	fmt.Println(x.Grad())

	// gradients accumulate until ZeroGrad
	x.MulScalar(10).Sum().Backward()
	fmt.Println(x.Grad())
	x.ZeroGrad()
	fmt.Println(x.Grad() == nil)
	// Output:
	// tensor([2., 4., 6.])
	// tensor([12., 14., 16.])
	// true
}

func ExampleTensor_BackwardWith() {
	x := tensor.New([]float32{1, 2, 3}).RequiresGrad()
	y := x.MulScalar(2) // not a scalar: seed its gradient explicitly
	y.BackwardWith(tensor.New([]float32{1, 10, 100}))
	fmt.Println(x.Grad())
	// Output:
	// tensor([  2.,  20., 200.])
}

func ExampleCatch() {
	a := tensor.Zeros(2, 3)
	b := tensor.Zeros(4, 5)
	err := tensor.Catch(func() { a.MatMul(b) })
	fmt.Println(err)
	// Output:
	// tensor: MatMul: shapes [2 3] and [4 5] are not compatible (inner dims 3 != 4)
}

func ExampleBroadcastShapes() {
	fmt.Println(tensor.BroadcastShapes([]int{8, 1, 6, 1}, []int{7, 1, 5}))
	fmt.Println(tensor.BroadcastShapes([]int{5, 2}, []int{5}))
	// Output:
	// [8 7 6 5] true
	// [] false
}

func ExampleTensor_Permute() {
	x := tensor.Arange(0, 6, 1).Reshape(2, 3)
	y := x.Permute(1, 0) // a view: same storage, swapped strides
	fmt.Println(y)
	fmt.Println(y.Strides(), y.IsContiguous())
	// Output:
	// tensor([[0., 3.],
	//         [1., 4.],
	//         [2., 5.]])
	// [1 3] false
}

func ExampleTensor_Softmax() {
	x := tensor.New([]float32{1, 2, 3, 1, 1, 1}, 2, 3)
	fmt.Println(x.Softmax(-1))
	// Output:
	// tensor([[0.0900, 0.2447, 0.6652],
	//         [0.3333, 0.3333, 0.3333]])
}

func ExampleCrossEntropy() {
	logits := tensor.New([]float32{2, 0, 0, 0, 2, 0}, 2, 3).RequiresGrad()
	targets := tensor.FromInts([]int{0, 1}, 2)
	loss := tensor.CrossEntropy(logits, targets)
	fmt.Printf("%.4f\n", loss.Item())
	// Output:
	// 0.2395
}

func ExampleCat() {
	a := tensor.Ones(2, 2)
	b := tensor.Zeros(2, 1)
	fmt.Println(tensor.Cat([]*tensor.Tensor{a, b}, 1))
	// Output:
	// tensor([[1., 1., 0.],
	//         [1., 1., 0.]])
}

func ExampleWhere() {
	x := tensor.New([]float32{-2, -1, 0, 1, 2})
	fmt.Println(tensor.Where(x.GtScalar(0), x, x.MulScalar(0.1)))
	// Output:
	// tensor([-0.2000, -0.1000,  0.0000,  1.0000,  2.0000])
}

func ExampleGradCheck() {
	// check the derivatives of a small function of two inputs
	f := func(in []*tensor.Tensor) *tensor.Tensor {
		return in[0].MatMul(in[1]).Tanh()
	}
	tensor.ManualSeed(1)
	a := tensor.Randn(3, 4)
	b := tensor.Randn(4, 2)
	fmt.Println(tensor.GradCheck(f, []*tensor.Tensor{a, b}, tensor.GradCheckOptions{}))

	// a function whose hand-written backward is wrong is caught
	double := func(in []*tensor.Tensor) *tensor.Tensor {
		// forward 2x, but the detached half gets no gradient: d/dx = 1, not 2
		return in[0].Add(in[0].Detach())
	}
	err := tensor.GradCheck(double, []*tensor.Tensor{tensor.Ones(2)}, tensor.GradCheckOptions{})
	fmt.Println(err != nil)
	// Output:
	// <nil>
	// true
}

// Large tensors are summarised as PyTorch does; this output is PyTorch's
// for torch.arange(2000.).reshape(40, 50) and torch.arange(1100).reshape(2, 550).
func ExampleTensor_String() {
	fmt.Println(tensor.Arange(0, 2000, 1).Reshape(40, 50))
	fmt.Println(tensor.ArangeInt(1100).Reshape(2, 550))
	// Output:
	// tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,
	//          4.9000e+01],
	//         [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,
	//          9.9000e+01],
	//         [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,
	//          1.4900e+02],
	//         ...,
	//         [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,
	//          1.8990e+03],
	//         [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,
	//          1.9490e+03],
	//         [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,
	//          1.9990e+03]])
	// tensor([[   0,    1,    2,  ...,  547,  548,  549],
	//         [ 550,  551,  552,  ..., 1097, 1098, 1099]])
}

func Example_noGrad() {
	w := tensor.Ones(2, 2).RequiresGrad()
	var y *tensor.Tensor
	autograd.NoGrad(func() { y = w.MulScalar(3) })
	fmt.Println(y.IsRequiringGrad())
	// Output:
	// false
}

// Goroutines that each draw from a generator of their own get the numbers
// they would get alone, whatever the others and the global generator do.
func ExampleNewGenerator() {
	draw := func(gen *tensor.Generator) *tensor.Tensor {
		x := gen.Randn(2, 3)
		return x.DropoutWith(0.5, true, gen) // the mask from gen too
	}
	results := make([]*tensor.Tensor, 4)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			tensor.ManualSeed(uint64(i)) // no effect on the explicit generators
			results[i] = draw(tensor.NewGenerator(uint64(i)))
		})
	}
	wg.Wait()
	alone := draw(tensor.NewGenerator(2))
	fmt.Println(results[2])
	fmt.Println(slices.Equal(results[2].Float32s(), alone.Float32s()))
	// Output:
	// tensor([[ 1.3266,  0.0000,  0.0000],
	//         [ 0.8418, -0.0000, -0.0000]])
	// true
}

func ExampleSetMaxAllocBytes() {
	// fail rather than allocate more than 1 GiB in one tensor
	defer tensor.SetMaxAllocBytes(tensor.SetMaxAllocBytes(1 << 30))
	err := tensor.Catch(func() { tensor.Zeros(1<<15, 1<<15) })
	fmt.Println(err)
	// Output: tensor: Zeros: a float32 tensor of shape [32768 32768] would need 4294967296 bytes (4 GiB), above the allocation limit of 1073741824 bytes (1 GiB); tensor.SetMaxAllocBytes changes the limit
}

// ExampleFunction defines a differentiable operation the way
// torch.autograd.Function does: Forward on raw float32 slices, Backward
// with tensor operations, checked against finite differences.
func ExampleFunction() {
	cube := &tensor.Function{
		Name: "Cube",
		Forward: func(ctx *tensor.FunctionContext, in []*tensor.Tensor) []*tensor.Tensor {
			x := in[0]
			ctx.SaveForBackward(x)
			d := x.Float32s() // a host copy: any Go code may compute on it
			for i, v := range d {
				d[i] = v * v * v
			}
			return []*tensor.Tensor{tensor.NewOn(x.Device(), d, x.Shape()...)}
		},
		Backward: func(ctx *tensor.FunctionContext, grads []*tensor.Tensor) []*tensor.Tensor {
			x := ctx.SavedTensors()[0]
			return []*tensor.Tensor{grads[0].Mul(x.Square()).MulScalar(3)} // 3x²·g
		},
	}
	x := tensor.New([]float32{1, 2, 3}).RequiresGrad()
	y := cube.Apply(x)
	y.Sum().Backward()
	fmt.Println(y)
	fmt.Println(x.Grad())
	err := tensor.GradCheck(func(in []*tensor.Tensor) *tensor.Tensor { return cube.Apply(in[0]) },
		[]*tensor.Tensor{tensor.New([]float32{0.5, -1, 2})}, tensor.GradCheckOptions{})
	fmt.Println("GradCheck:", err)
	// Output:
	// tensor([ 1.,  8., 27.], grad_fn=<CubeBackward0>)
	// tensor([ 3., 12., 27.])
	// GradCheck: <nil>
}
