package autograd

import (
	"strings"
	"testing"
)

// TestRunReleasedPanicsWithError: a second Run through a released graph
// panics with an *Error naming Backward, the node and the remedy.
func TestRunReleasedPanicsWithError(t *testing.T) {
	leaf := NewLeaf("x")
	root := NewNode("Mul", "[2 3]", []*Node{leaf}, func() {})
	Run(root)
	var got any
	func() {
		defer func() { got = recover() }()
		Run(root)
	}()
	e, ok := got.(*Error)
	if !ok {
		t.Fatalf("second Run recovered %#v, want an *Error", got)
	}
	msg := e.Error()
	for _, w := range []string{"autograd: Backward: ", "second time", "Mul [2 3]", "recomputing the forward pass"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q does not mention %q", msg, w)
		}
	}
}
