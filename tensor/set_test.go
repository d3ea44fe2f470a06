package tensor_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

func TestSetFloat32s(t *testing.T) {
	x := tensor.Zeros(2, 3)
	x.SetFloat32s(2, []float32{1, 2, 3})
	if got, want := x.Float32s(), []float32{0, 0, 1, 2, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("SetFloat32s(2, [1 2 3]) on zeros [2 3]: %v, want %v", got, want)
	}
	x.SetFloat32s(6, nil) // an empty range at the end is fine
	// a contiguous view that starts inside its storage writes into its base
	base := tensor.Zeros(3, 2)
	base.Slice(0, 1, 3).SetFloat32s(1, []float32{7, 8})
	if got, want := base.Float32s(), []float32{0, 0, 0, 7, 8, 0}; !slices.Equal(got, want) {
		t.Errorf("SetFloat32s through a view: base %v, want %v", got, want)
	}
	// not recorded: a parameter is written inside NoGrad, as with CopyFrom,
	// and stays a leaf
	w := tensor.Zeros(2).RequiresGrad()
	autograd.NoGrad(func() { w.SetFloat32s(0, []float32{1, 2}) })
	if got := w.Float32s(); !slices.Equal(got, []float32{1, 2}) || !w.IsLeaf() {
		t.Errorf("SetFloat32s on a parameter: %v", got)
	}
}

func TestSetFloat32sPanics(t *testing.T) {
	cases := []struct {
		name string
		want string
		f    func()
	}{
		{"past the end", "[5, 7)", func() { tensor.Zeros(2, 3).SetFloat32s(5, []float32{1, 2}) }},
		{"negative offset", "[-1, 0)", func() { tensor.Zeros(2, 3).SetFloat32s(-1, []float32{1}) }},
		{"int64", "int64", func() { tensor.FromInts([]int{1, 2}).SetFloat32s(0, []float32{1}) }},
		{"not contiguous", "strides [1 3]", func() { tensor.Zeros(2, 3).T().SetFloat32s(0, []float32{1}) }},
		{"a leaf that requires grad, recording", "in-place", func() { tensor.Zeros(2).RequiresGrad().SetFloat32s(0, []float32{1}) }},
	}
	for _, c := range cases {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || te.Op != "SetFloat32s" || !strings.Contains(te.Msg, c.want) {
			t.Errorf("%s: got %v, want a SetFloat32s error containing %q", c.name, err, c.want)
		}
	}
}
