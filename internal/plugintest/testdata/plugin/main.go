// This file is the kind of source gomacro (gophernotes' interpreter)
// generates to import packages: a main package whose Packages map lists
// each package's exported functions and types as reflect values, built with
// `go build -buildmode=plugin` and opened with plugin.Open. Demo exercises
// the packages from inside the plugin.
package main

import (
	"fmt"
	. "reflect"
	"strings"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/plot"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// Package is gomacro's per-package record (reduced to what this test uses).
type Package = struct {
	Name  string
	Binds map[string]Value
	Types map[string]Type
}

// Packages maps import paths to their exported symbols, like the file that
// gomacro generates for `import "github.com/wickml/wick/tensor"`.
var Packages = map[string]Package{
	"github.com/wickml/wick/tensor": {
		Name: "tensor",
		Binds: map[string]Value{
			"New":        ValueOf(tensor.New),
			"Ones":       ValueOf(tensor.Ones),
			"Arange":     ValueOf(tensor.Arange),
			"ManualSeed": ValueOf(tensor.ManualSeed),
			"Randn":      ValueOf(tensor.Randn),
		},
		Types: map[string]Type{
			"Tensor":          TypeOf((*tensor.Tensor)(nil)).Elem(),
			"Function":        TypeOf((*tensor.Function)(nil)).Elem(),
			"FunctionContext": TypeOf((*tensor.FunctionContext)(nil)).Elem(),
		},
	},
	"github.com/wickml/wick/autograd": {
		Name: "autograd",
		Binds: map[string]Value{
			"NoGrad": ValueOf(autograd.NoGrad),
			"DOT":    ValueOf(autograd.DOT),
		},
		Types: map[string]Type{
			"Node":  TypeOf((*autograd.Node)(nil)).Elem(),
			"Graph": TypeOf((*autograd.Graph)(nil)).Elem(),
		},
	},
	"github.com/wickml/wick/nn": {
		Name: "nn",
		Binds: map[string]Value{
			"NewLinear":  ValueOf(nn.NewLinear),
			"NewGPT":     ValueOf(nn.NewGPT),
			"Named":      ValueOf(nn.Named),
			"MSELoss":    ValueOf(nn.MSELoss),
			"ReduceMean": ValueOf(nn.ReduceMean),
		},
		Types: map[string]Type{
			"GPTConfig":  TypeOf((*nn.GPTConfig)(nil)).Elem(),
			"Module":     TypeOf((*nn.Module)(nil)).Elem(),
			"Sequential": TypeOf((*nn.Sequential)(nil)).Elem(),
			"Container":  TypeOf((*nn.Container)(nil)).Elem(),
			"ReLU":       TypeOf((*nn.ReLU)(nil)).Elem(),
		},
	},
	"github.com/wickml/wick/optim": {
		Name: "optim",
		Binds: map[string]Value{
			"NewAdamW":     ValueOf(optim.NewAdamW),
			"DefaultAdamW": ValueOf(optim.DefaultAdamW),
			"ClipGradNorm": ValueOf(optim.ClipGradNorm),
		},
		Types: map[string]Type{
			"AdamWConfig": TypeOf((*optim.AdamWConfig)(nil)).Elem(),
		},
	},
	"github.com/wickml/wick/tokenizer": {
		Name: "tokenizer",
		Binds: map[string]Value{
			"NewChar":      ValueOf(tokenizer.NewChar),
			"TrainBPE":     ValueOf(tokenizer.TrainBPE),
			"Unmarshal":    ValueOf(tokenizer.Unmarshal),
			"EncodeStrict": ValueOf(tokenizer.EncodeStrict),
		},
		Types: map[string]Type{
			"Tokenizer": TypeOf((*tokenizer.Tokenizer)(nil)).Elem(),
			"Char":      TypeOf((*tokenizer.Char)(nil)).Elem(),
			"BPE":       TypeOf((*tokenizer.BPE)(nil)).Elem(),
		},
	},
	"github.com/wickml/wick/plot": {
		Name: "plot",
		Binds: map[string]Value{
			"LossCurveSVG": ValueOf(plot.LossCurveSVG),
		},
		Types: map[string]Type{
			"Series": TypeOf((*plot.Series)(nil)).Elem(),
			"Plot":   TypeOf((*plot.Plot)(nil)).Elem(),
		},
	},
}

// Demo builds a tensor, takes one optimizer step on a linear layer and
// draws a loss curve and a graph, returning a summary line per step.
func Demo() string {
	var out []string
	x := tensor.New([]float32{1, 2, 3, 4}, 2, 2)
	out = append(out, x.String())

	tensor.ManualSeed(1)
	lin := nn.NewLinear(2, 1, true)
	opt := optim.NewAdamW(lin.Parameters(), optim.AdamWConfig{LR: 0.1})
	var losses []float64
	for range 3 {
		loss := lin.Forward(x).Sub(tensor.Ones(2, 1)).PowScalar(2).Mean()
		losses = append(losses, float64(loss.Item()))
		if len(losses) == 1 {
			out = append(out, loss.Graph().String())
		}
		loss.Backward()
		opt.Step()
		opt.ZeroGrad()
	}
	if losses[2] < losses[0] {
		out = append(out, "loss decreased")
	}
	// Grad mode is per goroutine, also inside a plugin: off inside NoGrad,
	// on for another goroutine meanwhile.
	autograd.NoGrad(func() {
		other := make(chan bool)
		go func() { other <- autograd.Enabled() }()
		out = append(out, fmt.Sprintf("grad mode: %v %v", autograd.Enabled(), <-other))
	})
	// building blocks: a Sequential inside a Container, a loss, a custom
	// Function and DefaultAdamW
	seq := nn.Sequential{nn.NewLinear(2, 3, true), nn.ReLU{}, nn.NewLinear(3, 1, true)}
	model := nn.Container{nn.Named("body", seq)}
	double := &tensor.Function{
		Name: "Double",
		Forward: func(_ *tensor.FunctionContext, in []*tensor.Tensor) []*tensor.Tensor {
			return []*tensor.Tensor{in[0].MulScalar(2)}
		},
		Backward: func(_ *tensor.FunctionContext, g []*tensor.Tensor) []*tensor.Tensor {
			return []*tensor.Tensor{g[0].MulScalar(2)}
		},
	}
	cfg := optim.DefaultAdamW()
	cfg.Beta1 = 0
	adam := optim.NewAdamW(model.Parameters(), cfg)
	mse := nn.MSELoss(double.Apply(seq.Forward(x)), tensor.Ones(2, 1), nn.ReduceMean)
	mse.Backward()
	adam.Step()
	names := []string{}
	for _, p := range model.NamedParameters() {
		names = append(names, p.Name)
	}
	out = append(out, "names: "+strings.Join(names, " "), fmt.Sprintf("beta1: %v", adam.Config().Beta1))
	// tokenizers: a char and a trained BPE, saved and read back
	text := "the cat sat on the mat"
	var toks []string
	for _, tok := range []tokenizer.Tokenizer{tokenizer.NewChar([]byte(text)), must(tokenizer.TrainBPE([]byte(text), 260))} {
		back, err := tokenizer.Unmarshal(must(tok.MarshalJSON()))
		if err != nil {
			panic(err)
		}
		toks = append(toks, fmt.Sprintf("%s %d %q", back.Kind(), back.VocabSize(), back.Decode(tok.Encode("the mat"))))
	}
	out = append(out, "tokenizers: "+strings.Join(toks, ", "))
	svg := plot.LossCurveSVG("loss", plot.Series{Name: "train", Y: losses})
	out = append(out, "svg:"+svg[:4])
	return strings.Join(out, "\n")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func main() {}
