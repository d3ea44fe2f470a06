package tensor

import "fmt"

// Error is the value Wick panics with when an operation is called with
// arguments that cannot be right: mismatched shapes, an out-of-range
// dimension or index, a float operation on an Int64 tensor, and the like.
// Its message names the operation, the shapes or dtypes involved and what was
// expected. Use Catch to turn such panics into errors.
type Error struct {
	Op  string // the operation, such as "MatMul"
	Msg string // what was wrong
}

// Error returns "tensor: Op: Msg".
func (e *Error) Error() string { return "tensor: " + e.Op + ": " + e.Msg }

// panicf panics with an *Error for op.
func panicf(op, format string, args ...any) {
	panic(&Error{Op: op, Msg: fmt.Sprintf(format, args...)})
}

// Catch calls f and returns the *Error that f panicked with, if any. Other
// panics propagate unchanged.
func Catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*Error); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}
