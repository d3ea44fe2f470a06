package nn

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestMoveModule runs To's walk with a "move" that clones on the CPU, so
// that every replaced tensor is visible: a GPT (tied lm_head) and a
// Container with a Param, a Sequential inside an interface and a ModuleList.
func TestMoveModule(t *testing.T) {
	clone := func(t *tensor.Tensor) *tensor.Tensor { return t.Detach().Clone() }

	tensor.ManualSeed(1)
	g := NewGPT(GPTConfig{VocabSize: 7, BlockSize: 4, NLayer: 2, NHead: 2, NEmbd: 8, Bias: true})
	x := tensor.FromInts([]int{1, 2, 3, 4}, 1, 4)
	g.Loss(x, x).Backward()
	g.Eval()
	before := g.Forward(x).Float32s()
	oldParams := g.Parameters()
	oldGrad := oldParams[0].Grad().Float32s()
	moveModule("To", g, clone)
	for i, p := range g.Parameters() {
		if p == oldParams[i] || !p.IsRequiringGrad() || !p.IsLeaf() || p.Grad() == nil || p.Grad() == oldParams[i].Grad() {
			t.Fatalf("parameter %d: not replaced by a leaf that requires grad with its gradient moved", i)
		}
	}
	if g.LmHead.Weight != g.Wte.Weight {
		t.Error("lm_head.weight is no longer tied to wte.weight")
	}
	if got := g.Parameters()[0].Grad().Float32s(); !slices.Equal(got, oldGrad) {
		t.Error("the moved gradient differs")
	}
	if got := g.Forward(x).Float32s(); !slices.Equal(got, before) {
		t.Error("the moved model computes something else")
	}

	scale := tensor.Ones(2).RequiresGrad()
	lin := NewLinear(2, 2, true)
	c := Container{Named("seq", Sequential{lin, ReLU{}}), Named("list", ModuleList{NewLinear(2, 1, false)}), Param("scale", scale)}
	oldC := c.Parameters()
	moveModule("To", c, clone)
	for i, p := range c.Parameters() {
		if p == oldC[i] {
			t.Errorf("container parameter %d was not replaced", i)
		}
	}
	if lin.Weight == oldC[0] || c.Parameters()[3] == scale {
		t.Error("the Linear inside the Sequential or the Param kept its old tensor")
	}

	// A parameter only an unexported field reaches stays behind: named.
	// (Reached through the Container, the unexported field's Linear moves.)
	h := &hidden{l: NewLinear(1, 1, false)}
	h.Container = Container{Named("l", h.l), Named("o", &opaque{tensor.Zeros(1).RequiresGrad()})}
	err := tensor.Catch(func() { moveModule("To", h, clone) })
	var te *tensor.Error
	if !errors.As(err, &te) || !strings.Contains(err.Error(), `parameter "o.w" (float32[1] on cpu) stays behind`) {
		t.Errorf("%v, want a *tensor.Error naming o.w", err)
	}
	if h.l.Weight != h.Parameters()[0] {
		t.Error("the Linear of the unexported field was not moved through the Container")
	}
}

type hidden struct {
	Container
	l *Linear
}

// opaque is a module whose parameter only an unexported field holds.
type opaque struct{ w *tensor.Tensor }

func (o *opaque) NamedParameters() []NamedParam { return []NamedParam{{"w", o.w}} }
func (o *opaque) Parameters() []*tensor.Tensor  { return []*tensor.Tensor{o.w} }
func (o *opaque) Train()                        {}
func (o *opaque) Eval()                         {}
