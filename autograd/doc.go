// Package autograd is Wick's reverse-mode differentiation engine.
//
// It knows nothing about tensors. Every differentiable operation in package
// tensor records a Node on the tape: the operation's name, the nodes of the
// inputs it depends on, and a Backward closure that reads the output's
// gradient and accumulates the inputs' gradients. Run orders the recorded
// graph topologically and calls the closures in reverse order, then releases
// the graph so that its memory can be reclaimed (a second Run through the same
// nodes panics, as in PyTorch).
//
// Recording is on by default and can be switched off for a function with
// NoGrad, which is what inference code uses:
//
//	autograd.NoGrad(func() {
//		logits := model.Forward(idx) // nothing is recorded
//		_ = logits
//	})
//
// Grad mode belongs to the goroutine that sets it, as PyTorch's belongs to a
// thread: NoGrad stops recording only for the operations that run on the
// calling goroutine, so an inference goroutine never stops a training
// goroutine from recording. Run, the backward pass, computes the gradients
// with recording off on its own goroutine. Many goroutines may record and
// run disjoint graphs at once; one graph is run by one goroutine at a time
// (Run panics when it finds another goroutine running the same nodes).
//
// The recorded graph of a tensor can be inspected: DOT renders it as Graphviz
// text and SVG draws it directly (a layered drawing made in Go, no external
// tools), so that a notebook shows what the tape holds. A Graph wraps a root
// node with both methods; tensor's Tensor.Graph returns one, so that the
// gophernotes cell
//
//	loss.Graph()
//
// displays the picture. Take it before Backward, which releases the graph.
package autograd
