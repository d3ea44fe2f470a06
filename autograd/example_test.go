package autograd_test

import (
	"fmt"

	"github.com/wickml/wick/autograd"
)

// ExampleRun differentiates y = a*b + a by hand-written backward closures,
// the way package tensor records its operations.
func ExampleRun() {
	a, b := 3.0, 4.0
	var ga, gb, gy, gprod float64
	na := autograd.NewLeaf("a")
	nb := autograd.NewLeaf("b")
	prod := autograd.NewNode("Mul", "a*b", []*autograd.Node{na, nb}, func() {
		ga += gprod * b // gradients accumulate (+=), so fan-out is correct
		gb += gprod * a
	})
	y := autograd.NewNode("Add", "a*b+a", []*autograd.Node{prod, na}, func() {
		gprod += gy
		ga += gy
	})
	gy = 1 // seed dy/dy
	autograd.Run(y)
	fmt.Println(ga, gb)
	// Output: 5 3
}

func ExampleNoGrad() {
	fmt.Println(autograd.Enabled())
	autograd.NoGrad(func() {
		fmt.Println(autograd.Enabled())
	})
	fmt.Println(autograd.Enabled())
	// Output:
	// true
	// false
	// true
}

func ExampleDOT() {
	w := autograd.NewLeaf("[3 2]")
	mm := autograd.NewNode("MatMul", "[4 2]", []*autograd.Node{w}, nil)
	loss := autograd.NewNode("Sum", "[]", []*autograd.Node{mm}, nil)
	fmt.Print(autograd.DOT(loss))
	// Output:
	// digraph autograd {
	// 	node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];
	// 	edge [arrowsize=0.7];
	// 	n0 [label="leaf\n[3 2]", fillcolor="#d6e9f8"];
	// 	n1 [label="MatMul\n[4 2]", fillcolor="#eeeeee"];
	// 	n2 [label="Sum\n[]", fillcolor="#cdebc5"];
	// 	n0 -> n1;
	// 	n1 -> n2;
	// }
}

func ExampleGraph() {
	x := autograd.NewLeaf("[3]")
	e := autograd.NewNode("Exp", "[3]", []*autograd.Node{x}, nil)
	loss := autograd.NewNode("Sum", "[]", []*autograd.Node{e}, nil)
	g := autograd.NewGraph(loss)
	// In a notebook, a cell whose value is g draws g.SVG().
	fmt.Println(g)
	// Output: autograd.Graph(2 ops, 1 leaves, root Sum [])
}
