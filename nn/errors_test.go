package nn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// TestMisuseIsCaught checks that each kind of misuse of nn panics with a
// *tensor.Error that tensor.Catch returns as an error, naming package nn,
// the operation and the shapes or values involved.
func TestMisuseIsCaught(t *testing.T) {
	cfg := nn.GPTConfig{VocabSize: 9, BlockSize: 4, NLayer: 1, NHead: 1, NEmbd: 4}
	gpt := nn.NewGPT(cfg)
	cases := []struct {
		name, op string
		want     []string
		f        func()
	}{
		{"NewLinear size", "NewLinear", []string{"in=0", "out=3"}, func() { nn.NewLinear(0, 3, true) }},
		{"NewEmbedding size", "NewEmbedding", []string{"num=4", "dim=-1"}, func() { nn.NewEmbedding(4, -1) }},
		{"NewLayerNorm size", "NewLayerNorm", []string{"positive", "0"}, func() { nn.NewLayerNorm(0, true) }},
		{"NewDropout p", "NewDropout", []string{"between 0 and 1", "1.5"}, func() { nn.NewDropout(1.5) }},
		{"NewCausalSelfAttention heads", "NewCausalSelfAttention", []string{"n_embd 4", "n_head 3"},
			func() { nn.NewCausalSelfAttention(nn.GPTConfig{NEmbd: 4, NHead: 3}) }},
		{"NewGPT config", "NewGPT", []string{"invalid GPTConfig", "n_layer must be positive, got 0"},
			func() { nn.NewGPT(nn.GPTConfig{VocabSize: 9, BlockSize: 4, NHead: 1, NEmbd: 4}) }},
		{"Linear input", "Linear", []string{"[3 24]", "in_features=4"},
			func() { nn.NewLinear(4, 2, false).Forward(tensor.Zeros(3, 24)) }},
		{"attention input", "CausalSelfAttention", []string{"[B, T, 4]", "[2 4]"},
			func() { nn.NewCausalSelfAttention(cfg).Forward(tensor.Zeros(2, 4)) }},
		{"GELU approximate", "GELU", []string{`"fast"`}, func() { nn.GELU{Approximate: "fast"}.Forward(tensor.Zeros(2)) }},
		{"Sequential nil", "Sequential", []string{"layer 1 of 2 is nil"},
			func() { nn.Sequential{nn.NewLinear(2, 2, true), nil}.Forward(tensor.Zeros(2)) }},
		{"Container names", "Container", []string{`"a"`, "two children"},
			func() {
				nn.Container{{Name: "a", Module: nn.NewLinear(1, 1, true)}, {Name: "a", Module: nn.NewLinear(1, 1, true)}}.NamedParameters()
			}},
		{"loss shapes", "MSELoss", []string{"[2 3]", "[3 2]"},
			func() { nn.MSELoss(tensor.Zeros(2, 3), tensor.Zeros(3, 2), nn.ReduceMean) }},
		{"GPT.Forward long", "GPT.Forward", []string{"length 5", "block size is only 4"},
			func() { gpt.Forward(tensor.FromInts([]int{1, 2, 3, 4, 5}, 1, 5)) }},
		{"GPT.Forward float", "GPT.Forward", []string{"float32", "[1 3]"}, func() { gpt.Forward(tensor.Zeros(1, 3)) }},
		{"Generate temperature", "GPT.Generate", []string{"temperature", "-1"},
			func() { gpt.Generate(tensor.FromInts([]int{1}, 1, 1), 2, -1, 0) }},
		{"CropBlockSize", "GPT.CropBlockSize", []string{"block size 9", "4"}, func() { gpt.CropBlockSize(9) }},
		{"SetDropout", "GPT.SetDropout", []string{"1.5", "[0, 1)"}, func() { gpt.SetDropout(1.5) }},
		{"Checkpoint.NewModel", "Checkpoint.NewModel", []string{"no tensors"},
			func() { _, _ = (&nn.Checkpoint{}).NewModel() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := tensor.Catch(c.f)
			var e *tensor.Error
			if !errors.As(err, &e) {
				t.Fatalf("Catch returned %v (%T), want a *tensor.Error", err, err)
			}
			if e.Pkg != "nn" || e.Op != c.op {
				t.Errorf("Pkg, Op = %q, %q, want nn, %q", e.Pkg, e.Op, c.op)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "nn: "+c.op+": ") {
				t.Errorf("message %q does not start with %q", msg, "nn: "+c.op+": ")
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not mention %q", msg, w)
				}
			}
		})
	}
}

// TestLayerMisuseIsCaught checks the panics that nn's layers leave to the
// tensor ops they call (their doc comments name them): tensor.Catch returns
// each as a *tensor.Error.
func TestLayerMisuseIsCaught(t *testing.T) {
	cfg := nn.GPTConfig{VocabSize: 9, BlockSize: 4, NLayer: 1, NHead: 1, NEmbd: 4}
	for name, f := range map[string]func(){
		"Embedding index": func() { nn.NewEmbedding(3, 2).Forward(tensor.FromInts([]int{0, 3}, 2)) },
		"Embedding float": func() { nn.NewEmbedding(3, 2).Forward(tensor.Zeros(2)) },
		"LayerNorm size":  func() { nn.NewLayerNorm(4, true).Forward(tensor.Zeros(2, 3)) },
		"MLP size":        func() { nn.NewGPT(cfg).H[0].MLP.Forward(tensor.Zeros(2, 3)) },
		"Block shape":     func() { nn.NewGPT(cfg).H[0].Forward(tensor.Zeros(2, 4)) },
		"ForwardLoss shape": func() {
			nn.NewGPT(cfg).ForwardLoss(tensor.FromInts([]int{1, 2}, 1, 2), tensor.FromInts([]int{1}, 1, 1))
		},
	} {
		err := tensor.Catch(f)
		var e *tensor.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: Catch returned %v (%T), want a *tensor.Error", name, err, err)
		}
	}
}
