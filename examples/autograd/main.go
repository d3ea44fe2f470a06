// Command autograd shows what the tape records and how gradients flow: it
// builds a small loss, prints its graph in Graphviz's DOT language, writes
// the graph as an SVG picture, runs Backward and prints the gradients, then
// shows NoGrad and gradient accumulation. These are the autograd steps of
// the notebook examples/wick.ipynb as a program.
//
//	go run ./examples/autograd              # writes graph.svg into a new temporary folder
//	go run ./examples/autograd -out DIR     # into DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

func main() {
	out := flag.String("out", "", "folder for graph.svg (default: a new temporary folder)")
	flag.Parse()
	if *out == "" {
		dir, err := os.MkdirTemp("", "wick-autograd-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "autograd:", err)
			os.Exit(1)
		}
		*out = dir
	}
	svgPath := filepath.Join(*out, "graph.svg")

	tensor.ManualSeed(1337)
	x := tensor.Randn(4, 8)
	w := tensor.Randn(8, 2).RequiresGrad()
	b := tensor.Zeros(2).RequiresGrad()
	loss := x.MatMul(w).Add(b).ReLU().Mean()
	fmt.Println("loss:", loss)

	// The recorded graph. Take it before Backward, which releases it.
	g := loss.Graph()
	fmt.Println(g)
	fmt.Print(g.DOT())
	if err := os.WriteFile(svgPath, []byte(g.SVG()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "autograd:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", svgPath)

	loss.Backward()
	fmt.Println("dloss/dw:", w.Grad())
	fmt.Println("dloss/db:", b.Grad())

	// Nothing is recorded inside NoGrad.
	autograd.NoGrad(func() {
		y := x.MatMul(w)
		fmt.Println("recorded under NoGrad:", y.Graph())
	})

	// Gradients accumulate until ZeroGrad, as in PyTorch.
	x.MatMul(w).Add(b).ReLU().Mean().Backward()
	fmt.Println("db after a second Backward:", b.Grad())
	b.ZeroGrad()
	fmt.Println("db after ZeroGrad:", b.Grad())
}
