package tensor_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// TestBadInput checks that every kind of programmer error panics with an
// *Error whose message names the operation and the shapes or dtypes.
func TestBadInput(t *testing.T) {
	ints := func() *tensor.Tensor { return tensor.FromInts([]int{1, 2, 3}, 3) }
	cases := []struct {
		name string
		op   string   // expected Error.Op
		want []string // substrings of the message
		f    func()
	}{
		{"Add shape mismatch", "Add", []string{"[5 2]", "[5]", "broadcast"},
			func() { tensor.Zeros(5, 2).Add(tensor.Zeros(5)) }},
		{"Add 4-d mismatch", "Add", []string{"[5 7 5 1]", "[1 5 1 5]"},
			func() { tensor.Zeros(5, 7, 5, 1).Add(tensor.Zeros(1, 5, 1, 5)) }},
		{"Mul shape mismatch", "Mul", []string{"[2 3]", "[3 2]"},
			func() { tensor.Zeros(2, 3).Mul(tensor.Zeros(3, 2)) }},
		{"MatMul inner dims", "MatMul", []string{"[2 3]", "[4 5]", "3 != 4"},
			func() { tensor.Zeros(2, 3).MatMul(tensor.Zeros(4, 5)) }},
		{"MatMul vector", "MatMul", []string{"[3]", "[4]"},
			func() { tensor.Zeros(3).MatMul(tensor.Zeros(4)) }},
		{"MatMul batch dims", "MatMul", []string{"[2 2 3]", "[3 3 5]", "batch"},
			func() { tensor.Zeros(2, 2, 3).MatMul(tensor.Zeros(3, 3, 5)) }},
		{"MatMul 0-d", "MatMul", []string{"[]", "[3]"},
			func() { tensor.Scalar(1).MatMul(tensor.Zeros(3)) }},
		{"BackwardWith nil", "BackwardWith", []string{"gradient is nil", "[2 3]"},
			func() { tensor.Zeros(2, 3).RequiresGrad().MulScalar(2).BackwardWith(nil) }},
		{"Dropout NaN", "Dropout", []string{"between 0 and 1", "NaN"},
			func() { tensor.Zeros(2, 3).Dropout(float32(math.NaN()), true) }},
		{"Reshape size", "Reshape", []string{"[4 2]", "size 6", "[2 3]"},
			func() { tensor.Zeros(2, 3).Reshape(4, 2) }},
		{"Reshape -1 size", "Reshape", []string{"[4 -1]", "size 6"},
			func() { tensor.Zeros(2, 3).Reshape(4, -1) }},
		{"Reshape two -1", "Reshape", []string{"[-1 -1]"},
			func() { tensor.Zeros(2, 3).Reshape(-1, -1) }},
		{"View non-contiguous", "View", []string{"[6]", "[3 2]", "Reshape"},
			func() { tensor.Zeros(2, 3).T().View(6) }},
		{"Select index", "Select", []string{"index 3", "size 3", "[2 3]"},
			func() { tensor.Zeros(2, 3).Select(1, 3) }},
		{"Select negative index", "Select", []string{"index -3", "[2 3]"},
			func() { tensor.Zeros(2, 3).Select(0, -3) }},
		{"Select dim", "Select", []string{"dimension 2", "[2 3]"},
			func() { tensor.Zeros(2, 3).Select(2, 0) }},
		{"Narrow range", "Narrow", []string{"[2, 4)", "size 3", "[2 3]"},
			func() { tensor.Zeros(2, 3).Narrow(1, 2, 2) }},
		{"Narrow dim", "Narrow", []string{"dimension -3", "[2 3]"},
			func() { tensor.Zeros(2, 3).Narrow(-3, 0, 1) }},
		{"Slice dim", "Slice", []string{"dimension 5", "[4]"},
			func() { tensor.Zeros(4).Slice(5, 0, 1) }},
		{"Sum dim", "Sum", []string{"dimension 2", "[2 3]"},
			func() { tensor.Zeros(2, 3).Sum(2) }},
		{"Sum repeated dim", "Sum", []string{"dim 1", "multiple"},
			func() { tensor.Zeros(2, 3).Sum(1, -1) }},
		{"Mean dim", "Mean", []string{"dimension -3", "[2 3]"},
			func() { tensor.Zeros(2, 3).Mean(-3) }},
		{"Max dim", "Max", []string{"dimension 3", "[2 3 4]"},
			func() { tensor.Zeros(2, 3, 4).Max(3) }},
		{"Softmax dim", "Softmax", []string{"dimension 2", "[2 3]"},
			func() { tensor.Zeros(2, 3).Softmax(2) }},
		{"Permute dim", "Permute", []string{"dimension 2", "[2 3]"},
			func() { tensor.Zeros(2, 3).Permute(0, 2) }},
		{"Permute count", "Permute", []string{"1", "[2 3]"},
			func() { tensor.Zeros(2, 3).Permute(0) }},
		{"Permute repeated", "Permute", []string{"repeated", "[0 0]"},
			func() { tensor.Zeros(2, 3).Permute(0, 0) }},
		{"Transpose dim", "Transpose", []string{"dimension 2", "[2 3]"},
			func() { tensor.Zeros(2, 3).Transpose(0, 2) }},
		{"Expand", "Expand", []string{"[4 3]", "[2 3]"},
			func() { tensor.Zeros(2, 3).Expand(4, 3) }},
		{"Unsqueeze dim", "Unsqueeze", []string{"dimension 4", "[-3, 2]", "[2 3]"},
			func() { tensor.Zeros(2, 3).Unsqueeze(4) }},
		{"Max over an empty dim", "Max", []string{"zero-size", "[0 3]"},
			func() { tensor.Zeros(0, 3).Max(0) }},
		{"ArgMax over an empty dim", "ArgMax", []string{"zero-size", "[0 3]"},
			func() { tensor.Zeros(0, 3).ArgMax(0) }},
		{"IndexSelect index", "IndexSelect", []string{"index 5", "size 2", "[2 3]"},
			func() { tensor.Zeros(2, 3).IndexSelect(0, tensor.FromInts([]int{5}, 1)) }},
		{"IndexSelect float index", "IndexSelect", []string{"int64", "float32[1]"},
			func() { tensor.Zeros(2, 3).IndexSelect(1, tensor.Zeros(1)) }},
		{"Stack shapes", "Stack", []string{"[2]", "[3]"},
			func() { tensor.Stack([]*tensor.Tensor{tensor.Zeros(2), tensor.Zeros(3)}, 0) }},
		{"Where shapes", "Where", []string{"[2]", "[3]"},
			func() { tensor.Where(tensor.Zeros(2), tensor.Zeros(3), tensor.Zeros(3)) }},
		{"At index", "At", []string{"index 3", "size 3", "[2 3]"},
			func() { tensor.Zeros(2, 3).At(0, 3) }},
		{"At count", "At", []string{"1 indices", "[2 3]"},
			func() { tensor.Zeros(2, 3).At(0) }},
		{"Item", "Item", []string{"6 elements", "[2 3]"},
			func() { tensor.Zeros(2, 3).Item() }},
		{"Embedding index", "Embedding", []string{"index 4", "4 entries", "[4 3]"},
			func() { tensor.Embedding(tensor.Zeros(4, 3), tensor.FromInts([]int{1, 4}, 2)) }},
		{"Embedding negative index", "Embedding", []string{"index -1", "[4 3]"},
			func() { tensor.Embedding(tensor.Zeros(4, 3), tensor.FromInts([]int{-1}, 1)) }},
		{"Embedding float index", "Embedding", []string{"int64", "float32"},
			func() { tensor.Embedding(tensor.Zeros(4, 3), tensor.Zeros(2)) }},
		{"CrossEntropy target", "CrossEntropy", []string{"target 5", "5 classes"},
			func() { tensor.CrossEntropy(tensor.Zeros(2, 5), tensor.FromInts([]int{0, 5}, 2)) }},
		{"CrossEntropy shapes", "CrossEntropy", []string{"[2 5]", "[2]", "[3]"},
			func() { tensor.CrossEntropy(tensor.Zeros(2, 5), tensor.FromInts([]int{0, 1, 2}, 3)) }},
		{"Cat sizes", "Cat", []string{"[2 3]", "[2 4]", "dimension 0"},
			func() { tensor.Cat([]*tensor.Tensor{tensor.Zeros(2, 3), tensor.Zeros(2, 4)}, 0) }},
		{"Cat dim", "Cat", []string{"dimension 2", "[2 3]"},
			func() { tensor.Cat([]*tensor.Tensor{tensor.Zeros(2, 3), tensor.Zeros(2, 3)}, 2) }},
		{"LayerNorm weight", "LayerNorm", []string{"[4]", "[2 4]", "[3]"},
			func() { tensor.Zeros(2, 4).LayerNorm(tensor.Ones(3), nil, 1e-5) }},
		{"Exp on Int64", "Exp", []string{"float32", "int64", "[3]"},
			func() { ints().Exp() }},
		{"Add on Int64", "Add", []string{"float32", "int64[3]"},
			func() { ints().Add(ints()) }},
		{"Add Int64 and Float32", "Add", []string{"int64[3]", "float32[3]"},
			func() { ints().Add(tensor.Zeros(3)) }},
		{"Sum on Int64", "Sum", []string{"float32", "int64", "[3]"},
			func() { ints().Sum() }},
		{"MatMul on Int64", "MatMul", []string{"float32", "int64", "[3]"},
			func() { ints().MatMul(tensor.Zeros(3)) }},
		{"Softmax on Int64", "Softmax", []string{"float32", "int64"},
			func() { ints().Softmax(0) }},
		{"RequiresGrad on Int64", "RequiresGrad", []string{"float32", "int64"},
			func() { ints().RequiresGrad() }},
		{"Backward non-scalar", "Backward", []string{"scalar", "[2 3]", "BackwardWith"},
			func() { tensor.Zeros(2, 3).RequiresGrad().MulScalar(2).Backward() }},
		{"Backward without grad", "Backward", []string{"[2 3]", "does not require grad"},
			func() { tensor.Zeros(2, 3).MulScalar(2).BackwardWith(tensor.Ones(2, 3)) }},
		{"BackwardWith shape", "Backward", []string{"[3 2]", "[2 3]"},
			func() {
				y := tensor.Zeros(2, 3).RequiresGrad().MulScalar(2)
				y.BackwardWith(tensor.Ones(3, 2))
			}},
		{"Backward twice", "Backward", []string{"second time", "released"},
			func() {
				l := tensor.Zeros(2, 3).RequiresGrad().MulScalar(2).Sum()
				l.Backward()
				l.Backward()
			}},
		{"Backward through a released graph", "Backward", []string{"second time", "MulScalar", "[2 3]"},
			func() {
				y := tensor.Zeros(2, 3).RequiresGrad().MulScalar(2)
				y.Sum().Backward()
				y.Mean().Backward() // y's node was released by the first pass
			}},
		{"New size", "New", []string{"[2 2]", "4 elements", "got 3"},
			func() { tensor.New([]float32{1, 2, 3}, 2, 2) }},
		{"Zeros negative", "Zeros", []string{"negative", "[2 -1]"},
			func() { tensor.Zeros(2, -1) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := tensor.Catch(c.f)
			if err == nil {
				t.Fatalf("no panic; want a %s error", c.op)
			}
			var e *tensor.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is %T, want *tensor.Error", err, err)
			}
			if e.Op != c.op {
				t.Errorf("Op = %q, want %q (message %q)", e.Op, c.op, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "tensor: "+c.op+": ") {
				t.Errorf("message %q does not start with %q", msg, "tensor: "+c.op+": ")
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not mention %q", msg, w)
				}
			}
		})
	}
}

// TestBadInputLeavesStateIntact checks that a rejected operation records
// nothing: a later backward pass still works.
func TestBadInputLeavesStateIntact(t *testing.T) {
	x := tensor.Ones(2, 3).RequiresGrad()
	if err := tensor.Catch(func() { x.Add(tensor.Zeros(3, 2)) }); err == nil {
		t.Fatal("Add of [2 3] and [3 2] did not panic")
	}
	x.MulScalar(3).Sum().Backward()
	for _, g := range x.Grad().Float32s() {
		if g != 3 {
			t.Fatalf("grad after a rejected op = %v, want all 3", x.Grad().Float32s())
		}
	}
}

// TestCatch checks that Catch returns nil without a panic and lets panics
// that are not *Error through.
func TestCatch(t *testing.T) {
	if err := tensor.Catch(func() { tensor.Zeros(2).Add(tensor.Zeros(2)) }); err != nil {
		t.Fatalf("Catch of a valid op = %v, want nil", err)
	}
	defer func() {
		if r := recover(); r != "other" {
			t.Fatalf("recovered %v, want the original panic value", r)
		}
	}()
	_ = tensor.Catch(func() { panic("other") })
	t.Fatal("Catch swallowed a panic that is not an *Error")
}

// TestCatchAutogradError checks that Catch also returns the backward
// engine's *autograd.Error, here for a second Run through a released graph.
func TestCatchAutogradError(t *testing.T) {
	root := autograd.NewNode("Mul", "[2 3]", []*autograd.Node{autograd.NewLeaf("x")}, func() {})
	autograd.Run(root)
	err := tensor.Catch(func() { autograd.Run(root) })
	var e *autograd.Error
	if !errors.As(err, &e) || e.Op != "Backward" || !strings.HasPrefix(err.Error(), "autograd: Backward: ") || !strings.Contains(err.Error(), "second time") {
		t.Fatalf("Catch of a second Run = %v (%T), want an *autograd.Error for Backward", err, err)
	}
}

// TestErrorPkg checks that an Error names the package that raised it,
// tensor when Pkg is empty.
func TestErrorPkg(t *testing.T) {
	if got := (&tensor.Error{Op: "Add", Msg: "m"}).Error(); got != "tensor: Add: m" {
		t.Errorf("Error() = %q, want %q", got, "tensor: Add: m")
	}
	if got := (&tensor.Error{Pkg: "nn", Op: "Linear", Msg: "m"}).Error(); got != "nn: Linear: m" {
		t.Errorf("Error() = %q, want %q", got, "nn: Linear: m")
	}
}

// TestNoGradRecordsNothing checks that results computed inside NoGrad do not
// require a gradient, so Backward on them is a bad-input panic.
func TestNoGradRecordsNothing(t *testing.T) {
	x := tensor.Ones(2).RequiresGrad()
	var y *tensor.Tensor
	autograd.NoGrad(func() { y = x.MulScalar(2).Sum() })
	if y.IsRequiringGrad() || y.GradFn() != nil {
		t.Fatal("a result computed inside NoGrad requires a gradient")
	}
	err := tensor.Catch(func() { y.Backward() })
	if err == nil || !strings.Contains(err.Error(), "does not require grad") {
		t.Fatalf("Backward on a NoGrad result: %v", err)
	}
}

// TestMatMulEmpty: products with an empty dimension give PyTorch's
// results (an empty tensor, or zeros when the inner dimension is empty)
// and gradients, instead of indexing past the empty operands.
func TestMatMulEmpty(t *testing.T) {
	a, b := tensor.Zeros(1, 2, 0, 4).RequiresGrad(), tensor.Zeros(1, 2, 4, 0)
	if got := a.MatMul(b).Shape(); !slices.Equal(got, []int{1, 2, 0, 0}) {
		t.Errorf("[1 2 0 4]·[1 2 4 0] has shape %v", got)
	}
	x, y := tensor.Ones(3, 0).RequiresGrad(), tensor.Ones(0, 2).RequiresGrad()
	z := x.MatMul(y)
	if !slices.Equal(z.Shape(), []int{3, 2}) || !slices.Equal(z.Float32s(), make([]float32, 6)) {
		t.Errorf("[3 0]·[0 2] = %v, want zeros [3 2]", z)
	}
	z.Sum().Backward()
	if !slices.Equal(x.Grad().Shape(), []int{3, 0}) || !slices.Equal(y.Grad().Shape(), []int{0, 2}) {
		t.Errorf("gradients of shapes %v and %v", x.Grad().Shape(), y.Grad().Shape())
	}
}
