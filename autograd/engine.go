package autograd

import "fmt"

// Node is one recorded operation on the tape.
//
// Op names the operation ("MatMul", "Add", ...); leaves that accumulate a
// gradient are recorded as "AccumulateGrad". Inputs lists the nodes of the
// operation's inputs that require a gradient. Backward propagates the
// gradient of the node's output into its inputs; it is nil for leaves.
type Node struct {
	Op       string
	Label    string // a short description of the output, such as its shape
	Inputs   []*Node
	Backward func()

	leaf     bool
	released bool
}

// NewNode records an operation node. backward is called once during Run,
// after every node that consumes this node's output has run.
func NewNode(op, label string, inputs []*Node, backward func()) *Node {
	return &Node{Op: op, Label: label, Inputs: inputs, Backward: backward}
}

// NewLeaf returns the node of a leaf that accumulates its gradient.
func NewLeaf(label string) *Node {
	return &Node{Op: "AccumulateGrad", Label: label, leaf: true}
}

// IsLeaf reports whether n is a leaf node.
func (n *Node) IsLeaf() bool { return n.leaf }

// Released reports whether the graph through n has already been run and
// freed by a backward pass.
func (n *Node) Released() bool { return n.released }

// Order returns the nodes reachable from root in topological order: every
// node comes after all of the nodes it depends on. It uses an explicit stack,
// so graphs of any depth are safe.
func Order(root *Node) []*Node {
	if root == nil {
		return nil
	}
	type frame struct {
		n    *Node
		next int
	}
	visited := map[*Node]bool{root: true}
	var order []*Node
	stack := []frame{{n: root}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(top.n.Inputs) {
			in := top.n.Inputs[top.next]
			top.next++
			if in != nil && !visited[in] {
				visited[in] = true
				stack = append(stack, frame{n: in})
			}
			continue
		}
		order = append(order, top.n)
		stack = stack[:len(stack)-1]
	}
	return order
}

// Run executes the backward pass from root. The caller must already have
// seeded root's gradient. Each node's Backward runs once, after all nodes
// that consume it; afterwards the graph is released: closures and input
// links of non-leaf nodes are dropped.
//
// Run panics if the graph has already been released by an earlier Run.
func Run(root *Node) {
	order := Order(root)
	for _, n := range order {
		if n.released {
			panic(fmt.Sprintf("autograd: Backward: trying to backward through the graph a second time (node %s %s was already released); keep the graph by recomputing the forward pass", n.Op, n.Label))
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		if n.Backward != nil {
			n.Backward()
		}
	}
	for _, n := range order {
		if !n.leaf {
			n.Backward = nil
			n.Inputs = nil
			n.released = true
		}
	}
}
