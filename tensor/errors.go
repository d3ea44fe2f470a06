package tensor

import (
	"fmt"

	"github.com/wickml/wick/autograd"
)

// Error is the value Wick panics with when an operation is called with
// arguments that cannot be right: mismatched shapes, an out-of-range
// dimension or index, a float operation on an Int64 tensor, and the like.
// Its message names the operation, the shapes or dtypes involved and what was
// expected. Packages above tensor (nn, optim) panic with it too, naming
// themselves in Pkg. Use Catch to turn such panics into errors.
type Error struct {
	Op  string // the operation, such as "MatMul"
	Msg string // what was wrong
	Pkg string // the package that panicked, such as "nn"; "" is "tensor"
}

// Error returns "Pkg: Op: Msg", with "tensor" for an empty Pkg.
func (e *Error) Error() string {
	pkg := e.Pkg
	if pkg == "" {
		pkg = "tensor"
	}
	return pkg + ": " + e.Op + ": " + e.Msg
}

// panicf panics with an *Error for op.
func panicf(op, format string, args ...any) {
	panic(&Error{Op: op, Msg: fmt.Sprintf(format, args...)})
}

// Catch calls f and returns the *Error (or the backward engine's
// *autograd.Error) that f panicked with, if any. Other panics propagate
// unchanged.
func Catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			switch e := r.(type) {
			case *Error:
				err = e
			case *autograd.Error:
				err = e
			default:
				panic(r)
			}
		}
	}()
	f()
	return nil
}
