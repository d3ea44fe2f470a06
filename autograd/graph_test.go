package autograd

import (
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	goldenfile "github.com/wickml/wick/internal/golden"
)

// golden compares got with testdata/graph/name (-update-golden rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "graph", name), got)
}

// mlpGraph records the graph of relu(x@w + b).mean() with leaves w and b,
// the shape tensor ops would record.
func mlpGraph() (root, w, b *Node) {
	w = NewLeaf("[8 2]")
	b = NewLeaf("[2]")
	mm := NewNode("MatMul", "[4 2]", []*Node{w}, nil)
	add := NewNode("Add", "[4 2]", []*Node{mm, b}, nil)
	relu := NewNode("ReLU", "[4 2]", []*Node{add}, nil)
	return NewNode("Mean", "[]", []*Node{relu}, nil), w, b
}

// diamondGraph has fan-out (x feeds two branches) and a long edge (x also
// feeds the final Mul directly).
func diamondGraph() *Node {
	x := NewLeaf("[3]")
	e := NewNode("Exp", "[3]", []*Node{x}, nil)
	s := NewNode("Sin", "[3]", []*Node{x}, nil)
	a := NewNode("Add", "[3]", []*Node{e, s}, nil)
	m := NewNode("Mul", "[3]", []*Node{a, x}, nil)
	return NewNode("Sum", "[]", []*Node{m}, nil)
}

func TestDOTGolden(t *testing.T) {
	root, _, _ := mlpGraph()
	golden(t, "mlp.dot.golden", DOT(root))
	golden(t, "diamond.dot.golden", DOT(diamondGraph()))
	golden(t, "leaf.dot.golden", DOT(NewLeaf("[2 3]")))
	golden(t, "empty.dot.golden", DOT(nil))
}

func TestSVGGolden(t *testing.T) {
	root, _, _ := mlpGraph()
	golden(t, "mlp.svg.golden", SVG(root))
	golden(t, "diamond.svg.golden", SVG(diamondGraph()))
	golden(t, "empty.svg.golden", SVG(nil))
}

func TestDOTStructure(t *testing.T) {
	dot := DOT(diamondGraph())
	nodes := regexp.MustCompile(`(?m)^\tn\d+ \[label=`).FindAllString(dot, -1)
	edges := regexp.MustCompile(`(?m)^\tn\d+ -> n\d+;$`).FindAllString(dot, -1)
	if len(nodes) != 6 || len(edges) != 7 {
		t.Errorf("%d nodes and %d edges, want 6 and 7:\n%s", len(nodes), len(edges), dot)
	}
	// Inputs are numbered first: the leaf is n0 and the root comes last.
	if !strings.Contains(dot, `n0 [label="leaf\n[3]"`) || !strings.Contains(dot, `n5 [label="Sum\n[]", fillcolor="`+rootFill+`"]`) {
		t.Errorf("unexpected numbering:\n%s", dot)
	}
	if q := dotQuote("a\"b\\c\nd"); q != `"a\"b\\c\nd"` {
		t.Errorf("dotQuote = %s", q)
	}
}

// svgBoxes parses an SVG from SVG() and returns the boxes' rectangles keyed
// by their tooltip, and the number of edges.
func svgBoxes(t *testing.T, s string) (map[string][4]float64, int) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	boxes := map[string][4]float64{}
	edges := 0
	var title string
	inTitle := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("invalid SVG: %v\n%s", err, s)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "title":
				inTitle = true
			case "path":
				for _, a := range e.Attr {
					if a.Name.Local == "marker-end" {
						edges++
					}
				}
			case "rect":
				var r [4]float64
				for _, a := range e.Attr {
					i := map[string]int{"x": 0, "y": 1, "width": 2, "height": 3}
					if k, ok := i[a.Name.Local]; ok {
						r[k] = parseNum(t, a.Value)
					}
				}
				boxes[title] = r
			}
		case xml.CharData:
			if inTitle {
				title = string(e)
			}
		case xml.EndElement:
			if e.Name.Local == "title" {
				inTitle = false
			}
		}
	}
	return boxes, edges
}

func parseNum(t *testing.T, s string) float64 {
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatalf("bad number %q", s)
	}
	return v
}

func TestSVGLayout(t *testing.T) {
	boxes, edges := svgBoxes(t, SVG(diamondGraph()))
	if len(boxes) != 6 || edges != 7 {
		t.Fatalf("%d boxes and %d edges, want 6 and 7", len(boxes), edges)
	}
	y := func(name string) float64 { return boxes[name][1] }
	// Every input sits above its consumer; the leaf is above everything
	// (it feeds Mul directly and through Exp/Sin/Add).
	for _, c := range [][2]string{
		{"AccumulateGrad [3]", "Exp [3]"}, {"Exp [3]", "Add [3]"}, {"Sin [3]", "Add [3]"},
		{"Add [3]", "Mul [3]"}, {"Mul [3]", "Sum []"},
	} {
		if !(y(c[0]) < y(c[1])) {
			t.Errorf("%s (y=%v) should be above %s (y=%v)", c[0], y(c[0]), c[1], y(c[1]))
		}
	}
	if y("Exp [3]") != y("Sin [3]") {
		t.Error("the two branches should share a row")
	}
	// Boxes in one row do not overlap.
	e, s := boxes["Exp [3]"], boxes["Sin [3]"]
	if e[0] < s[0] && e[0]+e[2] > s[0] || s[0] < e[0] && s[0]+s[2] > e[0] {
		t.Errorf("overlapping boxes %v and %v", e, s)
	}
}

func TestSVGReleased(t *testing.T) {
	root, _, _ := mlpGraph()
	Run(root)
	s := SVG(root)
	if !strings.Contains(s, "Mean (released)") {
		t.Errorf("released root not marked:\n%s", s)
	}
	if boxes, edges := svgBoxes(t, s); len(boxes) != 1 || edges != 0 {
		t.Errorf("released graph has %d boxes and %d edges", len(boxes), edges)
	}
}

func TestGraphType(t *testing.T) {
	root, _, _ := mlpGraph()
	g := NewGraph(root)
	if g.DOT() != DOT(root) || g.SVG() != SVG(root) {
		t.Error("Graph methods differ from DOT and SVG")
	}
	if got, want := g.String(), "autograd.Graph(4 ops, 2 leaves, root Mean [])"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := NewGraph(nil).String(); got != "autograd.Graph(empty)" {
		t.Errorf("empty String() = %q", got)
	}
}
