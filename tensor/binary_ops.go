package tensor

import "math"

// This file is the one place where a binary elementwise op is defined: its
// constant, its name, whether it is a comparison, its forward function for
// the CPU backend and the same function in CUDA C. `go generate ./cuda`
// writes the CUDA enum and the kernels' switches (csrc/binary_ops.cuh) from
// this file with internal/cudagen, so the two backends cannot disagree on
// the order or the set of ops, and nothing depends on where an op sits in
// the list. Adding an op: a constant below, a row in binaryOps, a method in
// elementwise.go with its derivative, then `go generate ./cuda`.
//
// The derivatives are compositions of tensor ops, so they sit in the
// methods of elementwise.go beside each forward call (a table entry
// holding them would refer back to the table through the ops it calls).

// BinaryOp names an elementwise function of two tensors.
type BinaryOp int

// The elementwise functions of two arguments. Comparisons produce 1 or 0.
const (
	OpAdd BinaryOp = iota
	OpSub
	OpMul
	OpDiv
	OpPow
	OpMaximum
	OpMinimum
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
)

// binaryDef is one row of the binary op table.
type binaryDef struct {
	// name is the op's name (BinaryOp.String, error messages; the CUDA
	// enum constant is WICK_ and the name in capitals).
	name string
	// compare marks a comparison: it takes two float32 or two int64
	// tensors, gives 1 or 0 as float32 and has no derivative.
	compare bool
	// fwd is op(a, b) as the CPU backend computes it on float32 (nil for
	// a comparison).
	fwd func(a, b float32) float32
	// cmp, for a comparison, is the relation as a function of compare3's
	// result, for float32s and int64s alike.
	cmp func(c int) bool
	// cu is op(x, y) in CUDA C on floats x and y; for a comparison, the
	// relation of x and y of any one type (the kernel gives 1.0f or 0.0f).
	cu string
}

// b2f is 1 for true and 0 for false.
func b2f(c bool) float32 {
	if c {
		return 1
	}
	return 0
}

// compare3 is -1, 0 or 1 as a <, ==, > b; 2 where the two are unordered
// (a NaN), for which only Ne holds.
func compare3[T float32 | int64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	}
	return 2
}

var binaryOps = [...]binaryDef{
	OpAdd: {name: "Add", fwd: func(a, b float32) float32 { return a + b }, cu: "x + y"},
	OpSub: {name: "Sub", fwd: func(a, b float32) float32 { return a - b }, cu: "x - y"},
	OpMul: {name: "Mul", fwd: func(a, b float32) float32 { return a * b }, cu: "x * y"},
	OpDiv: {name: "Div", fwd: func(a, b float32) float32 { return a / b }, cu: "x / y"},
	OpPow: {name: "Pow",
		fwd: func(a, b float32) float32 { return float32(math.Pow(float64(a), float64(b))) },
		cu:  "(float)pow((double)x, (double)y)"},
	OpMaximum: {name: "Maximum",
		fwd: func(a, b float32) float32 {
			if a != a || b != b {
				return float32(math.NaN())
			}
			return max(a, b)
		},
		cu: "(x != x || y != y) ? wick_nan() : fmaxf(x, y)"},
	OpMinimum: {name: "Minimum",
		fwd: func(a, b float32) float32 {
			if a != a || b != b {
				return float32(math.NaN())
			}
			return min(a, b)
		},
		cu: "(x != x || y != y) ? wick_nan() : fminf(x, y)"},
	OpEq: {name: "Eq", compare: true, cmp: func(c int) bool { return c == 0 }, cu: "x == y"},
	OpNe: {name: "Ne", compare: true, cmp: func(c int) bool { return c != 0 }, cu: "x != y"},
	OpLt: {name: "Lt", compare: true, cmp: func(c int) bool { return c == -1 }, cu: "x < y"},
	OpLe: {name: "Le", compare: true, cmp: func(c int) bool { return c == -1 || c == 0 }, cu: "x <= y"},
	OpGt: {name: "Gt", compare: true, cmp: func(c int) bool { return c == 1 }, cu: "x > y"},
	OpGe: {name: "Ge", compare: true, cmp: func(c int) bool { return c == 1 || c == 0 }, cu: "x >= y"},
}

// BinaryOps returns every BinaryOp, in the order of their constants.
func BinaryOps() []BinaryOp {
	ops := make([]BinaryOp, len(binaryOps))
	for i := range ops {
		ops[i] = BinaryOp(i)
	}
	return ops
}

// String returns the op's name, such as "Add".
func (op BinaryOp) String() string { return binaryOps[op].name }

// IsComparison reports whether op is a comparison (Eq, Ne, Lt, Le, Gt,
// Ge): it accepts two int64 tensors as well as two float32 ones, writes 1
// or 0 as float32 and has no derivative.
func (op BinaryOp) IsComparison() bool { return binaryOps[op].compare }
