package autograd

import (
	"fmt"
	"html"
	"sort"
	"strconv"
	"strings"
)

// Graph is the recorded graph that ends at one node, for display: DOT
// returns Graphviz text and SVG a picture drawn without external tools. A
// gophernotes cell whose value is a *Graph shows the picture.
//
// Edges point in the direction the data flows, from each input to the
// operation that consumes it, so the root (usually the loss) is at the
// bottom. Leaves that accumulate a gradient (parameters, inputs created
// with RequiresGrad) are drawn as "leaf" boxes with their shape.
//
// Backward releases the graph it runs through, so take the picture before
// calling Backward; a released root is drawn alone, marked "released".
type Graph struct {
	Root *Node
}

// NewGraph returns the graph recorded from root; root may be nil (nothing
// recorded), which gives an empty graph.
func NewGraph(root *Node) *Graph { return &Graph{Root: root} }

// DOT returns the graph in Graphviz's DOT language (see the package
// function DOT).
func (g *Graph) DOT() string { return DOT(g.Root) }

// SVG returns a drawing of the graph (see the package function SVG).
func (g *Graph) SVG() string { return SVG(g.Root) }

// String returns a one-line summary: the number of nodes and the root's
// operation.
func (g *Graph) String() string {
	nodes := Order(g.Root)
	if len(nodes) == 0 {
		return "autograd.Graph(empty)"
	}
	leaves := 0
	for _, n := range nodes {
		if n.IsLeaf() {
			leaves++
		}
	}
	return fmt.Sprintf("autograd.Graph(%d ops, %d leaves, root %s %s)", len(nodes)-leaves, leaves, g.Root.Op, g.Root.Label)
}

// title returns the first line of a node's box: the operation, or "leaf".
func title(n *Node) string {
	if n.IsLeaf() {
		return "leaf"
	}
	if n.Released() {
		return n.Op + " (released)"
	}
	return n.Op
}

// Fill colours: leaves light blue, operations light grey, the root green.
const (
	leafFill = "#d6e9f8"
	opFill   = "#eeeeee"
	rootFill = "#cdebc5"
)

func fill(n, root *Node) string {
	switch {
	case n == root:
		return rootFill
	case n.IsLeaf():
		return leafFill
	}
	return opFill
}

// DOT returns the graph recorded from root in Graphviz's DOT language, for
// `dot -Tsvg`. Nodes are numbered in topological order (inputs first), so
// the text is deterministic; each is a box with its operation and Label
// (the output shape). Edges go from inputs to the operations that use them.
func DOT(root *Node) string {
	var b strings.Builder
	b.WriteString("digraph autograd {\n")
	b.WriteString("\tnode [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=11];\n")
	b.WriteString("\tedge [arrowsize=0.7];\n")
	order := Order(root)
	id := make(map[*Node]int, len(order))
	for i, n := range order {
		id[n] = i
		label := title(n)
		if n.Label != "" {
			label += "\n" + n.Label
		}
		fmt.Fprintf(&b, "\tn%d [label=%s, fillcolor=%q];\n", i, dotQuote(label), fill(n, root))
	}
	for _, n := range order {
		for _, in := range n.Inputs {
			if in != nil {
				fmt.Fprintf(&b, "\tn%d -> n%d;\n", id[in], id[n])
			}
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// dotQuote quotes s as a DOT string, with \n for line breaks.
func dotQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	s = strings.ReplaceAll(s, "\n", `\n`)
	return `"` + s + `"`
}

// Layout constants of SVG, in pixels.
const (
	charW   = 7.2 // width of a 12px monospace character
	boxH    = 38.0
	boxPad  = 10.0
	gapX    = 18.0
	gapY    = 46.0
	marginX = 16.0
	marginY = 16.0
)

// vertex is a box of the drawing, or a dummy point that routes an edge
// spanning several rows (so that long edges go around boxes, not through
// them).
type vertex struct {
	n          *Node // nil for a dummy
	layer      int
	x, y       float64 // centre
	w          float64
	weight     float64 // ordering key within the row
	ups, downs []*vertex
}

// SVG draws the graph recorded from root as a standalone SVG document. The
// layout is layered: each node sits one row above the deepest operation that
// consumes it, so the root is at the bottom and every arrow points down;
// edges that span several rows are routed through gaps between boxes.
// Within a row, nodes are ordered to reduce crossings (barycentre sweeps).
// Boxes show the operation and the Label (output shape); leaves are blue,
// operations grey and the root green.
func SVG(root *Node) string {
	order := Order(root)
	if len(order) == 0 {
		return `<svg xmlns="http://www.w3.org/2000/svg" width="220" height="40" viewBox="0 0 220 40">` +
			`<text x="10" y="25" font-family="monospace" font-size="12" fill="#555555">(no recorded graph)</text></svg>` + "\n"
	}

	// Depth from the root: the longest path to it, so that inputs sit
	// above all of their consumers.
	consumers := map[*Node][]*Node{}
	for _, n := range order {
		for _, in := range n.Inputs {
			if in != nil {
				consumers[in] = append(consumers[in], n)
			}
		}
	}
	depth := map[*Node]int{}
	maxDepth := 0
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		d := 0
		for _, c := range consumers[n] {
			d = max(d, depth[c]+1)
		}
		depth[n] = d
		maxDepth = max(maxDepth, d)
	}

	// Rows from the top (deepest inputs) to the root. The initial order
	// within a row is that of a breadth-first walk from the root, so that
	// inputs keep their argument order.
	rows := make([][]*vertex, maxDepth+1)
	add := func(v *vertex) {
		v.weight = float64(len(rows[v.layer]))
		rows[v.layer] = append(rows[v.layer], v)
	}
	vx := map[*Node]*vertex{}
	seen := map[*Node]bool{root: true}
	queue := []*Node{root}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		v := &vertex{n: n, layer: maxDepth - depth[n]}
		v.w = float64(max(len(title(n)), len(n.Label)))*charW + 2*boxPad
		add(v)
		vx[n] = v
		for _, in := range n.Inputs {
			if in != nil && !seen[in] {
				seen[in] = true
				queue = append(queue, in)
			}
		}
	}
	// Edges, with a dummy vertex in every row that an edge crosses.
	type edge struct {
		path []*vertex // input, dummies, consumer
		slot int       // argument position at the consumer
	}
	var edges []edge
	for _, n := range order {
		c := vx[n]
		for i, in := range n.Inputs {
			if in == nil {
				continue
			}
			path := []*vertex{vx[in]}
			for l := vx[in].layer + 1; l < c.layer; l++ {
				d := &vertex{layer: l, w: 4}
				add(d)
				path = append(path, d)
			}
			path = append(path, c)
			for k := 1; k < len(path); k++ {
				path[k-1].downs = append(path[k-1].downs, path[k])
				path[k].ups = append(path[k].ups, path[k-1])
			}
			edges = append(edges, edge{path: path, slot: i})
		}
	}

	// Barycentre sweeps: order each row by the mean position of its
	// neighbours in the row below, then in the row above.
	reorder := func(row []*vertex, nbrs func(*vertex) []*vertex) {
		for _, v := range row {
			if ns := nbrs(v); len(ns) > 0 {
				sum := 0.0
				for _, u := range ns {
					sum += u.weight
				}
				v.weight = sum/float64(len(ns)) + v.weight*1e-3
			}
		}
		sort.SliceStable(row, func(i, j int) bool { return row[i].weight < row[j].weight })
		for i, v := range row {
			v.weight = float64(i)
		}
	}
	for range 4 {
		for l := len(rows) - 2; l >= 0; l-- {
			reorder(rows[l], func(v *vertex) []*vertex { return v.downs })
		}
		for l := 1; l < len(rows); l++ {
			reorder(rows[l], func(v *vertex) []*vertex { return v.ups })
		}
	}

	// Coordinates: rows centred on the widest one.
	rowWidth := func(row []*vertex) float64 {
		w := -gapX
		for _, v := range row {
			w += v.w + gapX
		}
		return w
	}
	width := 0.0
	for _, row := range rows {
		width = max(width, rowWidth(row))
	}
	for l, row := range rows {
		x := marginX + (width-rowWidth(row))/2
		for _, v := range row {
			v.x = x + v.w/2
			v.y = marginY + float64(l)*(boxH+gapY) + boxH/2
			x += v.w + gapX
		}
	}
	W := width + 2*marginX
	H := float64(len(rows))*(boxH+gapY) - gapY + 2*marginY

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="monospace" font-size="12">`+"\n",
		num(W), num(H), num(W), num(H))
	b.WriteString(`<defs><marker id="wick-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555555"/></marker></defs>` + "\n")
	// Edges first, so that boxes cover their ends. Each edge is a chain of
	// vertical S-curves from the bottom of one box to the top of the next.
	for _, e := range edges {
		c := e.path[len(e.path)-1]
		// Spread the arrow heads of several inputs along the top edge of
		// the consumer's box.
		k := float64(len(c.n.Inputs))
		tx := c.x + (float64(e.slot)+0.5-k/2)*min(c.w/(k+1), 24)
		src := e.path[0]
		x0, y0 := src.x, src.y+boxH/2
		fmt.Fprintf(&b, `<path d="M%s,%s`, num(x0), num(y0))
		for i, v := range e.path[1:] {
			x1, y1 := v.x, v.y-boxH/2
			if i == len(e.path)-2 {
				x1 = tx
			}
			my := (y1 - y0) / 2
			fmt.Fprintf(&b, ` C%s,%s %s,%s %s,%s`, num(x0), num(y0+my), num(x1), num(y1-my), num(x1), num(y1))
			if v.n == nil {
				// pass straight through the dummy's row
				y1 = v.y + boxH/2
				fmt.Fprintf(&b, ` L%s,%s`, num(x1), num(y1))
			}
			x0, y0 = x1, y1
		}
		b.WriteString(`" fill="none" stroke="#555555" stroke-width="1.2" marker-end="url(#wick-arrow)"/>` + "\n")
	}
	for _, n := range order {
		v := vx[n]
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%s" y="%s" width="%s" height="%s" rx="6" fill="%s" stroke="#777777"/>`,
			html.EscapeString(strings.TrimSpace(n.Op+" "+n.Label)), num(v.x-v.w/2), num(v.y-boxH/2), num(v.w), num(boxH), fill(n, root))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" font-weight="bold">%s</text>`,
			num(v.x), num(v.y-3), html.EscapeString(title(n)))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="#444444">%s</text></g>`+"\n",
			num(v.x), num(v.y+12), html.EscapeString(n.Label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// num formats a coordinate with at most two decimals.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
