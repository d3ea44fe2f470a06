package tensor_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"
)

// mlpLoss records relu(x@w + b).mean() as in the package documentation.
func mlpLoss() (loss, w *tensor.Tensor) {
	x := tensor.Arange(0, 32, 1).Reshape(4, 8).DivScalar(32)
	w = tensor.Ones(8, 2).RequiresGrad()
	b := tensor.Zeros(2).RequiresGrad()
	return x.MatMul(w).Add(b).ReLU().Mean(), w
}

func TestGraphGolden(t *testing.T) {
	loss, _ := mlpLoss()
	g := loss.Graph()
	displayGolden(t, "graph", "mlp.dot.golden", g.DOT())
	displayGolden(t, "graph", "mlp.svg.golden", g.SVG())
	checkXML(t, g.SVG())

	// Fan-out and a softmax cross-entropy: the same leaf used twice.
	x := tensor.New([]float32{1, -2, 3, 0.5, 0, -1}, 2, 3).RequiresGrad()
	y := x.Mul(x).Add(x.Exp()).Sum()
	displayGolden(t, "graph", "fanout.dot.golden", y.Graph().DOT())
}

func TestGraphEdges(t *testing.T) {
	loss, _ := mlpLoss()
	dot := loss.Graph().DOT()
	// Two leaves (w and b) and the ops in order; composite ops such as
	// Mean may record helper nodes, so only the order is checked.
	if n := strings.Count(dot, "[label=\"leaf"); n != 2 {
		t.Errorf("%d leaves, want 2:\n%s", n, dot)
	}
	last := -1
	for _, op := range []string{"leaf\\n[8 2]", "MatMul\\n[4 2]", "leaf\\n[2]", "Add\\n[4 2]", "ReLU\\n[4 2]", "Mean\\n[]"} {
		i := strings.Index(dot, op)
		if i < last {
			t.Errorf("%s missing or out of topological order:\n%s", op, dot)
		}
		last = i
	}
	if nodes, edges := strings.Count(dot, "[label="), strings.Count(dot, " -> "); edges != nodes-1 {
		t.Errorf("a chain with one join should have nodes-1 edges: %d nodes, %d edges", nodes, edges)
	}
}

func TestGraphEmptyAndReleased(t *testing.T) {
	if got := tensor.Ones(2).Graph().String(); got != "autograd.Graph(empty)" {
		t.Errorf("graph of a constant = %q", got)
	}
	if !strings.Contains(tensor.Ones(2).Graph().SVG(), "no recorded graph") {
		t.Error("empty graph SVG should say there is no graph")
	}
	loss, _ := mlpLoss()
	loss.Backward()
	if s := loss.Graph().SVG(); !strings.Contains(s, "Mean (released)") {
		t.Errorf("graph after Backward should be marked released:\n%s", s)
	}
}

// ExampleTensor_Graph shows the recorded graph of a loss: in a notebook the
// cell `loss.Graph()` draws it (SVG); DOT gives Graphviz text.
func ExampleTensor_Graph() {
	x := tensor.New([]float32{1, 2, 3, 4}, 2, 2)
	w := tensor.Ones(2, 1).RequiresGrad()
	loss := x.MatMul(w).Tanh().Sum()
	g := loss.Graph()
	fmt.Println(g)
	fmt.Println(strings.HasPrefix(g.SVG(), "<svg"))
	// Output:
	// autograd.Graph(3 ops, 1 leaves, root Sum [])
	// true
}
