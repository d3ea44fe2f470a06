package nn

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/wickml/wick/tensor"
)

// Module is a layer or a model: something with parameters that can be put in
// training or evaluation mode. Every module of this package implements it,
// and fmt.Stringer too, printing its tree like PyTorch's repr.
type Module interface {
	// Parameters returns the trainable tensors, in the order of
	// NamedParameters. A tied tensor appears once.
	Parameters() []*tensor.Tensor
	// NamedParameters returns each trainable tensor with its dotted
	// PyTorch name, in a stable order (the order of PyTorch's
	// named_parameters).
	NamedParameters() []NamedParam
	// Train switches the module and its children to training mode
	// (dropout active).
	Train()
	// Eval switches the module and its children to evaluation mode.
	Eval()
}

// NamedParam is a parameter with its dotted name, such as
// "transformer.h.0.attn.c_attn.weight".
type NamedParam struct {
	Name  string
	Param *tensor.Tensor
}

// params returns the tensors of named, in order.
func params(named []NamedParam) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(named))
	for i, p := range named {
		out[i] = p.Param
	}
	return out
}

// prefixed returns named with prefix+"." in front of every name.
func prefixed(prefix string, named []NamedParam) []NamedParam {
	out := make([]NamedParam, len(named))
	for i, p := range named {
		out[i] = NamedParam{Name: prefix + "." + p.Name, Param: p.Param}
	}
	return out
}

// NumParams returns the number of elements of m's parameters (tied
// tensors counted once): ParameterCount without its Container check.
func NumParams(m Module) int {
	n := 0
	for _, p := range m.Parameters() {
		n += p.Numel()
	}
	return n
}

// ParamsHTML returns an HTML table of m's parameters (name, shape, number
// of elements) with a total row, for notebooks.
func ParamsHTML(m Module) string {
	var b strings.Builder
	b.WriteString("<table class=\"wick-params\"><tr><th>name</th><th>shape</th><th>count</th></tr>")
	total := 0
	for _, p := range m.NamedParameters() {
		n := p.Param.Numel()
		total += n
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%v</td><td>%s</td></tr>", html.EscapeString(p.Name), p.Param.Shape(), groupDigits(n))
	}
	fmt.Fprintf(&b, "<tr><td><b>total</b></td><td></td><td><b>%s</b></td></tr></table>", groupDigits(total))
	return b.String()
}

// groupDigits writes n with thousands separators: 1,234,567.
func groupDigits(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + groupDigits(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// child is one named sub-module in a printed tree.
type child struct {
	name string
	m    fmt.Stringer
}

// treeString prints a module with children like PyTorch's repr, adding the
// parameter count of every module with parameters:
//
//	Block(  # 12,704 params
//	  (ln_1): LayerNorm((32,), eps=1e-05, bias=True)  # 64 params
//	  ...
//	)
func treeString(head string, count int, children []child) string {
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("(")
	if count > 0 {
		fmt.Fprintf(&b, "  # %s params", groupDigits(count))
	}
	for _, c := range children {
		s := strings.ReplaceAll(c.m.String(), "\n", "\n  ")
		fmt.Fprintf(&b, "\n  (%s): %s", c.name, s)
	}
	b.WriteString("\n)")
	return b.String()
}

// leafString prints a module without children, with its parameter count.
func leafString(s string, count int) string {
	if count == 0 {
		return s
	}
	return fmt.Sprintf("%s  # %s params", s, groupDigits(count))
}

// pyBool spells b like Python: True or False.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// pyFloat formats v like Python's repr of a float: 0.0, 0.1, 1e-05.
func pyFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 32)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return s
}
