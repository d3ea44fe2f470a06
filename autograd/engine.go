package autograd

import "sync/atomic"

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

	leaf      bool
	state     atomic.Int32 // idle, running (claimed by a Run) or released
	onRelease []func()     // run after a successful Run releases the node
}

// Node states. A Run claims every non-leaf node of its graph before calling
// any closure, so that two goroutines backpropagating through one graph at
// once are detected instead of corrupting each other's gradients.
const (
	idle int32 = iota
	running
	released
)

// NewNode records an operation node. backward is called once during Run,
// after every node that consumes this node's output has run.
func NewNode(op, label string, inputs []*Node, backward func()) *Node {
	return &Node{Op: op, Label: label, Inputs: inputs, Backward: backward}
}

// NewLeaf returns the node of a leaf that accumulates its gradient.
func NewLeaf(label string) *Node {
	return &Node{Op: "AccumulateGrad", Label: label, leaf: true}
}

// OnRelease registers f to run once, on the goroutine running the backward
// pass, after a Run through n has completed and released the graph: then no
// backward closure of the graph can run any more, so f may free what only
// those closures used. f does not run if the pass panics, nor if n is never
// backpropagated through (the graph is then left to the garbage
// collector). OnRelease does nothing on a leaf, which is never released,
// nor on a node already released. It must not be called while another
// goroutine runs the backward pass through n.
func (n *Node) OnRelease(f func()) {
	if n.leaf || n.state.Load() == released {
		return
	}
	n.onRelease = append(n.onRelease, f)
}

// IsLeaf reports whether n is a leaf node.
func (n *Node) IsLeaf() bool { return n.leaf }

// Released reports whether the graph through n has already been run and
// freed by a backward pass.
func (n *Node) Released() bool { return n.state.Load() == released }

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
// that consume it, with recording switched off on the calling goroutine
// (closures compute gradients without recording, whatever the caller's grad
// mode); afterwards the graph is released: closures and input links of
// non-leaf nodes are dropped, and then, if every closure returned, the
// functions registered with OnRelease on those nodes run.
//
// Run may be called on many goroutines at once for disjoint graphs. Run
// panics with an *Error if the graph has already been released by an
// earlier Run, or if another goroutine is running the backward pass through
// one of its nodes.
func Run(root *Node) {
	order := Order(root)
	for i, n := range order {
		if n.leaf || n.state.CompareAndSwap(idle, running) {
			continue
		}
		for _, m := range order[:i] {
			m.state.CompareAndSwap(running, idle) // hand back this Run's claims
		}
		if n.state.Load() == released {
			panicf("Backward", "trying to backward through the graph a second time (node %s %s was already released); keep the graph by recomputing the forward pass", n.Op, n.Label)
		}
		panicf("Backward", "node %s %s is being backpropagated on another goroutine at the same time; a graph can be run by one goroutine at a time", n.Op, n.Label)
	}
	// Released also when a closure panics: its partial gradients must not
	// be run again. The release hooks run only after a complete pass.
	done := false
	defer func() {
		if !done {
			releaseNodes(order)
		}
	}()
	NoGrad(func() {
		for i := len(order) - 1; i >= 0; i-- {
			if b := order[i].Backward; b != nil {
				b()
			}
		}
	})
	done = true
	for _, f := range releaseNodes(order) {
		f()
	}
}

// releaseNodes drops the closures and input links of the non-leaf nodes of
// order, marks them released and returns their release hooks.
func releaseNodes(order []*Node) (hooks []func()) {
	for _, n := range order {
		if !n.leaf {
			n.Backward = nil
			n.Inputs = nil
			n.state.Store(released)
			hooks = append(hooks, n.onRelease...)
			n.onRelease = nil
		}
	}
	return hooks
}
