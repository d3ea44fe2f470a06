package cudagen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnaryHeaderCurrent checks that the committed csrc/unary_ops.cuh is
// what the table in tensor/unary_ops.go generates, so that a table edit
// without `go generate ./cuda` fails the pure-Go tests (the PTX built from
// the header is checked by scripts/cuda_ci.sh, which needs nvcc).
func TestUnaryHeaderCurrent(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", TablePath))
	if err != nil {
		t.Fatal(err)
	}
	want, err := UnaryHeader(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", HeaderPath))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run `go generate ./cuda` and commit the result", HeaderPath)
	}
	for _, s := range []string{"WICK_NEG = 0, // tensor.OpNeg", "case WICK_GELUTANH: {", "case WICK_SQUARE: return x * x;"} {
		if !bytes.Contains(want, []byte(s)) {
			t.Errorf("the generated header lacks %q", s)
		}
	}
}

const table = `package tensor

type UnaryOp int

const (
	OpNeg UnaryOp = iota
	OpExp
)

var unaryOps = [...]unaryDef{
	%s
}
`

// TestUnaryHeaderErrors checks that a table the generator cannot follow is
// an error, not a header with the ops misnumbered.
func TestUnaryHeaderErrors(t *testing.T) {
	neg := `OpNeg: {name: "Neg", cu: "-x", cuGrad: "-g"},`
	exp := `OpExp: {name: "Exp", cu: "(float)exp(v)", cuGrad: "g * y"},`
	for _, c := range []struct{ rows, want string }{
		{neg, "no row for OpExp"},
		{neg + exp + neg, "a second row for OpNeg"},
		{neg + `{name: "Exp", cu: "x", cuGrad: "g"},`, "keyed"},
		{neg + `OpLog: {name: "Log", cu: "x", cuGrad: "g"},`, "OpLog is not a UnaryOp constant"},
		{neg + `OpExp: {name: "Exp", cu: "x"},`, "lacks name, cu or cuGrad"},
		{neg + `OpExp: {name: "NEG", cu: "x", cuGrad: "g"},`, "both give the CUDA constant WICK_NEG"},
		{neg + `OpExp: {name: "Exp", cu: expr, cuGrad: "g"},`, "must be a string literal"},
	} {
		_, err := UnaryHeader([]byte(strings.Replace(table, "%s", c.rows, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rows %s: got error %v, want one containing %q", c.rows, err, c.want)
		}
	}
	out, err := UnaryHeader([]byte(strings.Replace(table, "%s", exp+neg, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("WICK_NEG = 0,")) || !bytes.Contains(out, []byte("WICK_EXP = 1,")) {
		t.Errorf("rows out of order: the enum does not follow the constants:\n%s", out)
	}
}

// TestBinaryHeaderCurrent checks that the committed csrc/binary_ops.cuh is
// what the table in tensor/binary_ops.go generates, and that the
// comparisons come from the rows' compare field, not from their place.
func TestBinaryHeaderCurrent(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", BinaryTablePath))
	if err != nil {
		t.Fatal(err)
	}
	want, err := BinaryHeader(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", BinaryHeaderPath))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run `go generate ./cuda` and commit the result", BinaryHeaderPath)
	}
	for _, s := range []string{"WICK_ADD = 0, // tensor.OpAdd", "case WICK_GE: return x >= y ? 1.0f : 0.0f;", "case WICK_POW: return (float)pow((double)x, (double)y);"} {
		if !bytes.Contains(want, []byte(s)) {
			t.Errorf("the generated header lacks %q", s)
		}
	}
}

// TestBinaryHeaderRows checks that an op appended after the comparisons
// is a comparison only if its row says so, and that a malformed compare
// field is an error.
func TestBinaryHeaderRows(t *testing.T) {
	const src = `package tensor

type BinaryOp int

const (
	OpEq BinaryOp = iota
	OpAdd
)

var binaryOps = [...]binaryDef{
	OpEq: {name: "Eq", compare: true, cu: "x == y"},
	%s
}
`
	out, err := BinaryHeader([]byte(strings.Replace(src, "%s", `OpAdd: {name: "Add", cu: "x + y"},`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"WICK_ADD = 1,", "case WICK_ADD: return x + y;", "case WICK_EQ: return x == y ? 1.0f : 0.0f;"} {
		if !bytes.Contains(out, []byte(s)) {
			t.Errorf("the header lacks %q:\n%s", s, out)
		}
	}
	for _, c := range []struct{ rows, want string }{
		{`OpAdd: {name: "Add", compare: 1, cu: "x + y"},`, "must be true or false"},
		{`OpAdd: {name: "Add"},`, "lacks name or cu"},
		{``, "no row for OpAdd"},
	} {
		_, err := BinaryHeader([]byte(strings.Replace(src, "%s", c.rows, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rows %s: got error %v, want one containing %q", c.rows, err, c.want)
		}
	}
}
