package nn

import (
	"fmt"
	"slices"

	"github.com/wickml/wick/tensor"
)

// Reduction says how a loss reduces its per-element values, like the
// reduction argument of PyTorch's losses. The zero value is ReduceMean,
// PyTorch's default.
type Reduction int

// The reductions: PyTorch's 'mean', 'sum' and 'none'.
const (
	ReduceMean Reduction = iota // the mean over the elements (a 0-d tensor)
	ReduceSum                   // the sum over the elements (a 0-d tensor)
	ReduceNone                  // the per-element losses, in the input's shape
)

// String returns PyTorch's name of the reduction: "mean", "sum" or "none".
func (r Reduction) String() string {
	switch r {
	case ReduceMean:
		return "mean"
	case ReduceSum:
		return "sum"
	case ReduceNone:
		return "none"
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

func (r Reduction) check(op string) {
	if r < ReduceMean || r > ReduceNone {
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("unknown reduction %d; want ReduceMean, ReduceSum or ReduceNone", int(r))})
	}
}

// reduce applies r to per-element losses l.
func (r Reduction) reduce(l *tensor.Tensor) *tensor.Tensor {
	switch r {
	case ReduceSum:
		return l.Sum()
	case ReduceNone:
		return l
	}
	return l.Mean()
}

// checkPair panics unless input and target are Float32 tensors of one shape
// on one device (PyTorch broadcasts with a warning; a mismatch is almost
// always a bug, so Wick refuses it).
func checkPair(op string, input, target *tensor.Tensor) {
	switch {
	case input.DType() != tensor.Float32 || target.DType() != tensor.Float32:
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("input and target must be float32, got %s%v and %s%v", input.DType(), input.Shape(), target.DType(), target.Shape())})
	case !slices.Equal(input.Shape(), target.Shape()):
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("input of shape %v and target of shape %v differ; want one shape", input.Shape(), target.Shape())})
	case input.Device() != target.Device():
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("input on %s and target on %s; want one device", input.Device(), target.Device())})
	}
}

// MSELoss returns the squared error (input − target)², reduced by r, like
// torch.nn.functional.mse_loss. Both tensors are differentiated. It panics
// if they are not Float32 tensors of one shape on one device, or r is
// unknown.
func MSELoss(input, target *tensor.Tensor, r Reduction) *tensor.Tensor {
	r.check("MSELoss")
	checkPair("MSELoss", input, target)
	return r.reduce(input.Sub(target).Square())
}

// L1Loss returns the absolute error |input − target|, reduced by r, like
// torch.nn.functional.l1_loss (its gradient is sign(input − target), 0 at a
// tie). It panics like MSELoss.
func L1Loss(input, target *tensor.Tensor, r Reduction) *tensor.Tensor {
	r.check("L1Loss")
	checkPair("L1Loss", input, target)
	return r.reduce(input.Sub(target).Abs())
}

// bceWithLogits is the per-element binary cross-entropy of logits x against
// targets y, max(x, 0) − x·y + log(1 + e^−|x|), with PyTorch's gradients
// σ(x) − y for x and −x for y (exact also at x = 0, where the composed
// formula has a kink).
var bceWithLogits = &tensor.Function{
	Name: "BinaryCrossEntropyWithLogits",
	Forward: func(ctx *tensor.FunctionContext, in []*tensor.Tensor) []*tensor.Tensor {
		x, y := in[0], in[1]
		ctx.SaveForBackward(x, y)
		l := x.ReLU().Sub(x.Mul(y)).Add(x.Abs().Neg().Exp().AddScalar(1).Log())
		return []*tensor.Tensor{l}
	},
	Backward: func(ctx *tensor.FunctionContext, g []*tensor.Tensor) []*tensor.Tensor {
		x, y := ctx.SavedTensors()[0], ctx.SavedTensors()[1]
		var gx, gy *tensor.Tensor
		if ctx.NeedsInputGrad(0) {
			gx = g[0].Mul(x.Sigmoid().Sub(y))
		}
		if ctx.NeedsInputGrad(1) {
			gy = g[0].Mul(x).Neg()
		}
		return []*tensor.Tensor{gx, gy}
	},
}

// BCEWithLogitsLoss returns the binary cross-entropy of the probabilities
// σ(logits) against targets in [0, 1], −[y·log σ(x) + (1−y)·log(1−σ(x))],
// computed stably from the logits and reduced by r, like
// torch.nn.functional.binary_cross_entropy_with_logits (without weights).
// Both tensors are differentiated. It panics like MSELoss.
func BCEWithLogitsLoss(logits, target *tensor.Tensor, r Reduction) *tensor.Tensor {
	r.check("BCEWithLogitsLoss")
	checkPair("BCEWithLogitsLoss", logits, target)
	return r.reduce(bceWithLogits.Apply(logits, target))
}

// NLLLoss returns the negative log-likelihood −input[i, target[i]] of the
// Int64 targets under log-probabilities input (usually LogSoftmax's output),
// reduced by r, like torch.nn.functional.nll_loss without weights. input
// is [N, C] with target [N], [C] with a 0-d target, or [N, C, d1, …] with
// target [N, d1, …]; ReduceNone returns the target's shape. Unlike
// PyTorch's nll_loss, whose ignore_index is -100, NLLLoss ignores nothing
// (like tensor.CrossEntropy); NLLLossIgnore skips a target value.
//
// NLLLoss panics if input is not Float32 with at least one dimension, the
// target's shape or dtype does not fit, a target is outside [0, C), the two
// are on different devices, or r is unknown.
func NLLLoss(input, target *tensor.Tensor, r Reduction) *tensor.Tensor {
	return nllLoss("NLLLoss", input, target, r, tensor.NoIgnoreIndex)
}

// NLLLossIgnore is NLLLoss that skips the elements whose target is
// ignoreIndex (PyTorch's ignore_index): they count as zero loss with no
// gradient, and ReduceMean averages over the others only (NaN when none
// is left, as in PyTorch). NLLLossIgnore panics like NLLLoss.
func NLLLossIgnore(input, target *tensor.Tensor, r Reduction, ignoreIndex int) *tensor.Tensor {
	return nllLoss("NLLLoss", input, target, r, ignoreIndex)
}

func nllLoss(op string, input, target *tensor.Tensor, r Reduction, ignoreIndex int) *tensor.Tensor {
	r.check(op)
	shape := input.Shape()
	switch {
	case input.DType() != tensor.Float32 || input.Dim() == 0:
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("input must be float32 log-probabilities with a class dimension, got %s%v", input.DType(), shape)})
	case target.DType() != tensor.Int64:
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("target must be an int64 tensor, got %s%v", target.DType(), target.Shape())})
	case input.Device() != target.Device():
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("input on %s and target on %s; want one device", input.Device(), target.Device())})
	}
	// classes last: x is [rows, C]
	x := input
	var want []int
	switch input.Dim() {
	case 1:
		x = input.Unsqueeze(0)
		want = []int{}
	case 2:
		want = shape[:1]
	default:
		perm := []int{0}
		for d := 2; d < input.Dim(); d++ {
			perm = append(perm, d)
		}
		x = input.Permute(append(perm, 1)...)
		want = append([]int{shape[0]}, shape[2:]...)
	}
	if !slices.Equal(target.Shape(), want) {
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("input of shape %v needs a target of shape %v, got %v", shape, want, target.Shape())})
	}
	classes := x.Size(-1)
	flat := x.Reshape(-1)
	tg := target.Ints()
	idx := make([]int, len(tg))
	ignored := make([]float32, len(tg))
	count := 0
	for i, t := range tg {
		if t == ignoreIndex {
			ignored[i] = 1
			idx[i] = i * classes // any valid position: filled with 0 below
			continue
		}
		if t < 0 || t >= classes {
			panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("target %d is out of bounds for %d classes", t, classes)})
		}
		idx[i] = i*classes + t
		count++
	}
	dev := input.Device()
	picked := flat.IndexSelect(0, tensor.FromInts(idx).To(dev))
	if count < len(tg) {
		picked = picked.MaskedFill(tensor.NewOn(dev, ignored), 0)
	}
	l := picked.Neg()
	switch r {
	case ReduceSum:
		return l.Sum()
	case ReduceNone:
		return l.Reshape(want...)
	}
	return l.Sum().DivScalar(float32(count))
}
