package tensor

import "github.com/wickml/wick/autograd"

// Graph returns the autograd graph recorded for t: the operations that
// produced it back to the leaves that require a gradient. Its DOT method
// gives Graphviz text and its SVG method a picture, which a gophernotes cell
// such as `loss.Graph()` displays. The graph is empty when t does not
// require a gradient. Backward releases the graph it runs through, so call
// Graph before Backward.
func (t *Tensor) Graph() *autograd.Graph { return autograd.NewGraph(t.node) }
