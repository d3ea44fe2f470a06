package autograd

import "fmt"

// Error is the value the backward engine panics with when it is misused:
// running a graph that an earlier Run released, or one that another
// goroutine is running. Its message names the operation, the node (its op
// and output shape) and what was expected. tensor.Catch turns it into an
// error, as it does tensor's own *tensor.Error.
type Error struct {
	Op  string // the operation, such as "Backward"
	Msg string // what was wrong
}

// Error returns "autograd: Op: Msg".
func (e *Error) Error() string { return "autograd: " + e.Op + ": " + e.Msg }

// panicf panics with an *Error for op.
func panicf(op, format string, args ...any) {
	panic(&Error{Op: op, Msg: fmt.Sprintf(format, args...)})
}
