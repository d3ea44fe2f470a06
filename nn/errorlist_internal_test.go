package nn

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestErrorList checks how several problems print: the first on the
// error's line, each other once on its own indented line, at most
// maxProblems, then how many more.
func TestErrorList(t *testing.T) {
	a, b := errors.New("a is missing"), errors.New("b has shape [2]")
	nested := problemList([]error{errors.New("c1"), errors.New("c2")})
	if got, want := problemList([]error{a}).Error(), "a is missing"; got != want {
		t.Errorf("one problem: %q, want %q", got, want)
	}
	got := fmt.Errorf("nn: load f: %w", problemList([]error{a, b, a, nested, b})).Error()
	want := "nn: load f: a is missing\n\tb has shape [2]\n\tc1\n\t\tc2"
	if got != want {
		t.Errorf("several problems:\n%s\nwant:\n%s", got, want)
	}
	var many []error
	for i := range maxProblems + 3 {
		many = append(many, fmt.Errorf("problem %d", i))
	}
	lines := strings.Split(problemList(many).Error(), "\n")
	if len(lines) != maxProblems+1 || lines[0] != "problem 0" || lines[maxProblems-1] != fmt.Sprintf("\tproblem %d", maxProblems-1) || lines[maxProblems] != "\tand 3 more problems" {
		t.Errorf("%d problems: %q", len(many), lines)
	}
	if err := problemList([]error{a, b}); !errors.Is(err, a) || !errors.Is(err, b) {
		t.Errorf("%v does not wrap its problems", err)
	}
}
