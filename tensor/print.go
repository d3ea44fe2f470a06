package tensor

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
)

// PrintOptions control String, like torch.set_printoptions.
type PrintOptions struct {
	Precision int // digits after the point (4)
	Threshold int // summarise tensors with more elements than this (1000)
	EdgeItems int // elements kept at each end of a summarised dim (3)
	LineWidth int // characters per line (80)
}

var printOpts = PrintOptions{Precision: 4, Threshold: 1000, EdgeItems: 3, LineWidth: 80}

// SetPrintOptions changes how tensors are printed.
func SetPrintOptions(o PrintOptions) { printOpts = o }

// formatter formats every element of a tensor with one shared style, chosen
// like PyTorch's: integers print as "1.", values spanning many orders of
// magnitude in scientific notation, the rest with fixed precision.
type formatter struct {
	isInt, intMode, sci bool
	width               int
	prec                int
}

func newFormatter(vals []float64, isInt bool) formatter {
	f := formatter{isInt: isInt, prec: printOpts.Precision}
	if isInt {
		for _, v := range vals {
			f.width = max(f.width, len(strconv.FormatInt(int64(v), 10)))
		}
		return f
	}
	f.intMode = true
	var finite []float64
	for _, v := range vals {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			continue
		}
		finite = append(finite, v)
		if v != math.Trunc(v) {
			f.intMode = false
		}
	}
	if len(finite) > 0 {
		lo, hi := math.Inf(1), 0.0
		for _, v := range finite {
			a := math.Abs(v)
			if a != 0 {
				lo = min(lo, a)
				hi = max(hi, a)
			}
		}
		if hi > 0 {
			if f.intMode {
				f.sci = hi/lo > 1000 || hi > 1e8 // PyTorch's rule for integral values too
			} else {
				f.sci = hi/lo > 1000 || hi > 1e8 || lo < 1e-4
			}
		}
	}
	for _, v := range vals {
		f.width = max(f.width, len(f.raw(v)))
	}
	return f
}

func (f formatter) raw(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case f.isInt:
		return strconv.FormatInt(int64(v), 10)
	case f.sci:
		s := strconv.FormatFloat(v, 'e', f.prec, 64)
		return s
	case f.intMode:
		return strconv.FormatFloat(v, 'f', 0, 64) + "."
	}
	return strconv.FormatFloat(v, 'f', f.prec, 64)
}

func (f formatter) format(v float64) string {
	s := f.raw(v)
	if len(s) < f.width {
		s = strings.Repeat(" ", f.width-len(s)) + s
	}
	return s
}

// printIndices returns the indices of a dim of size n that are printed:
// all of them, or, when summarise is set and n exceeds 2·EdgeItems, the
// first and last EdgeItems with -1 marking the "..." gap between them.
func printIndices(n int, summarise bool) []int {
	e := printOpts.EdgeItems
	if !summarise || n <= 2*e {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := []int{}
	for i := range e {
		idx = append(idx, i)
	}
	idx = append(idx, -1)
	for i := n - e; i < n; i++ {
		idx = append(idx, i)
	}
	return idx
}

// String returns the tensor as PyTorch's repr prints it, for example
//
//	tensor([[ 0.1000, -2.0000],
//	        [ 3.5000,  4.0000]], requires_grad=True)
func (t *Tensor) String() string {
	const prefix = "tensor("
	vals := t.Float32s()
	all := make([]float64, len(vals))
	for i, v := range vals {
		all[i] = float64(v)
	}
	summarise := t.Numel() > printOpts.Threshold
	shown := all
	if summarise {
		shown = nil
		t.walk(all, summarise, func(v float64) { shown = append(shown, v) })
	}
	f := newFormatter(shown, t.DType() == Int64)
	var body string
	switch {
	case t.Dim() == 0:
		body = f.raw(all[0])
	case t.Numel() == 0:
		body = "[]"
	default:
		body = t.formatDim(all, f, 0, 0, len(prefix), summarise)
	}
	var suffix []string
	if t.Numel() == 0 && !slices.Equal(t.layout.Shape, []int{0}) {
		suffix = append(suffix, "size=("+joinInts(t.layout.Shape)+")")
	}
	if t.Device() != CPU {
		suffix = append(suffix, fmt.Sprintf("device='%s'", t.Device()))
	}
	if is16(t.DType()) {
		suffix = append(suffix, "dtype=torch."+t.DType().String())
	}
	switch {
	case t.GradFn() != nil:
		suffix = append(suffix, "grad_fn=<"+t.name+"Backward0>")
	case t.requiresGrad:
		suffix = append(suffix, "requires_grad=True")
	}
	out := prefix + body
	for _, s := range suffix {
		out += ", " + s
	}
	return out + ")"
}

func joinInts(s []int) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(v)
	}
	if len(s) == 1 {
		return parts[0] + ","
	}
	return strings.Join(parts, ", ")
}

// walk visits the printed elements in order.
func (t *Tensor) walk(all []float64, summarise bool, visit func(float64)) {
	strides := ContiguousStrides(t.layout.Shape)
	var rec func(d, off int)
	rec = func(d, off int) {
		if d == t.Dim() {
			visit(all[off])
			return
		}
		for _, i := range printIndices(t.layout.Shape[d], summarise) {
			if i >= 0 {
				rec(d+1, off+i*strides[d])
			}
		}
	}
	rec(0, 0)
}

func (t *Tensor) formatDim(all []float64, f formatter, d, off, indent int, summarise bool) string {
	strides := ContiguousStrides(t.layout.Shape)
	idx := printIndices(t.layout.Shape[d], summarise)
	if d == t.Dim()-1 {
		// elements wrap at the line width
		per := max(1, (printOpts.LineWidth-indent)/(f.width+2))
		var lines []string
		var cur []string
		for _, i := range idx {
			s := " ..." // PyTorch pads the gap in a row
			if i >= 0 {
				s = f.format(all[off+i*strides[d]])
			}
			cur = append(cur, s)
			if len(cur) == per {
				lines = append(lines, strings.Join(cur, ", "))
				cur = nil
			}
		}
		if len(cur) > 0 {
			lines = append(lines, strings.Join(cur, ", "))
		}
		return "[" + strings.Join(lines, ",\n"+strings.Repeat(" ", indent+1)) + "]"
	}
	sep := "," + strings.Repeat("\n", t.Dim()-d-1) + strings.Repeat(" ", indent+1)
	parts := make([]string, 0, len(idx))
	for _, i := range idx {
		if i < 0 {
			parts = append(parts, "...")
			continue
		}
		parts = append(parts, t.formatDim(all, f, d+1, off+i*strides[d], indent+1, summarise))
	}
	return "[" + strings.Join(parts, sep) + "]"
}

// HTML returns an HTML rendering for notebooks: a header with shape, dtype,
// device and grad state, then a table of the values for 0-, 1- and 2-D
// tensors of at most 400 elements, and for larger ones statistics (min,
// max, mean, std) followed by the values as String prints them.
func (t *Tensor) HTML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<div class=\"wick-tensor\"><p><b>Tensor</b> shape=%v dtype=%s device=%s", t.layout.Shape, t.DType(), t.Device())
	switch {
	case t.GradFn() != nil:
		b.WriteString(" grad_fn=" + html.EscapeString("<"+t.name+"Backward0>"))
	case t.requiresGrad:
		b.WriteString(" requires_grad")
	}
	b.WriteString("</p>")
	vals := t.Float32s()
	if t.Numel() > 0 && t.Dim() <= 2 && t.Numel() <= 400 {
		rows, cols := 1, len(vals)
		if t.Dim() == 2 {
			rows, cols = t.layout.Shape[0], t.layout.Shape[1]
		}
		all := make([]float64, len(vals))
		for i, v := range vals {
			all[i] = float64(v)
		}
		f := newFormatter(all, t.DType() == Int64)
		b.WriteString("<table>")
		for r := range rows {
			b.WriteString("<tr>")
			for c := range cols {
				fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(f.raw(all[r*cols+c])))
			}
			b.WriteString("</tr>")
		}
		b.WriteString("</table></div>")
		return b.String()
	}
	if len(vals) > 0 {
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, v := range vals {
			x := float64(v)
			lo, hi, sum = min(lo, x), max(hi, x), sum+x
		}
		mean := sum / float64(len(vals))
		var sq float64
		for _, v := range vals {
			sq += (float64(v) - mean) * (float64(v) - mean)
		}
		std := math.Sqrt(sq / float64(max(len(vals)-1, 1)))
		fmt.Fprintf(&b, "<table><tr><th>min</th><th>max</th><th>mean</th><th>std</th></tr><tr><td>%.4g</td><td>%.4g</td><td>%.4g</td><td>%.4g</td></tr></table>", lo, hi, mean, std)
		// The values too, summarised past the print threshold like String.
		b.WriteString("<pre>" + html.EscapeString(t.String()) + "</pre>")
	}
	b.WriteString("</div>")
	return b.String()
}
