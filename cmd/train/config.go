package main

// nanoGPT's config files (config/train_shakespeare_char.py and friends) are
// Python files that train.py runs with exec before it applies --key=value
// overrides (configurator.py). This file reads the subset of Python those
// files use, so that `train config/train_shakespeare_char.py --device=cpu`
// runs as nanoGPT's command line does:
//
//	# comment
//	name = value            # trailing comment
//	import time             # the one import nanoGPT's configs use
//
// where value is an int, float, 'string' or "string", True, False, the
// name of a flag (its current value), str(x), int(x), float(x),
// time.time(), and + - * / // % ** with parentheses. Anything else is an
// error naming the file and line. Assignments apply in order, as flags do,
// so command-line flags after the file override it.

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// applyConfigFile runs the assignments of the config file path against the
// flags of fs. ignore reports keys that are known but mean nothing to this
// command (train's flags given to `train sample`): they are skipped, as
// nanoGPT's sample.py leaves them unused.
func applyConfigFile(fs *flag.FlagSet, path string, ignore func(string) bool) error {
	b, err := readLimited(path, maxConfigBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("config file %s does not exist (an argument without \"=\" names a nanoGPT config file; flags are written --name=value)", path)
		}
		return fmt.Errorf("config file %s: %v", path, err)
	}
	imported := map[string]bool{}
	for i, line := range strings.Split(string(b), "\n") {
		if err := applyConfigLine(fs, strings.TrimSuffix(line, "\r"), imported, ignore); err != nil {
			return fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
	}
	return nil
}

// maxConfigBytes bounds a config file: nanoGPT's are a few hundred bytes.
const maxConfigBytes = 1 << 20

// applyConfigLine applies one line of a config file.
func applyConfigLine(fs *flag.FlagSet, line string, imported map[string]bool, ignore func(string) bool) error {
	toks, err := lexPython(line)
	if err != nil {
		return fmt.Errorf("cannot parse %q (%v)", strings.TrimSpace(line), err)
	}
	if len(toks) == 0 {
		return nil // blank or comment
	}
	if line[0] == ' ' || line[0] == '\t' {
		return fmt.Errorf("unexpected indent before %q (Python statements start in column 1)", strings.TrimSpace(line))
	}
	if toks[0].kind == tokName && toks[0].text == "import" {
		if len(toks) == 2 && toks[1].kind == tokName && toks[1].text == "time" {
			imported["time"] = true
			return nil
		}
		return fmt.Errorf("unsupported statement %q (config files may import only time)", strings.TrimSpace(line))
	}
	if len(toks) < 3 || toks[0].kind != tokName || toks[1].kind != tokOp || toks[1].text != "=" {
		return fmt.Errorf("cannot parse %q (want name = value)", strings.TrimSpace(line))
	}
	name := toks[0].text
	p := &pyParser{toks: toks[2:], fs: fs, imported: imported}
	v, err := p.expr()
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	if p.pos < len(p.toks) {
		return fmt.Errorf("cannot parse %q (unexpected %q)", strings.TrimSpace(line), p.toks[p.pos].text)
	}
	f := fs.Lookup(name)
	if f == nil {
		if ignore != nil && ignore(name) {
			return nil
		}
		return fmt.Errorf("unknown key %s (see --help for the flags)", name)
	}
	s, err := flagString(f, v)
	if err != nil {
		return fmt.Errorf("%s = %s: %v", name, v.repr(), err)
	}
	if err := fs.Set(name, s); err != nil {
		return fmt.Errorf("%s = %s: %v", name, v.repr(), err)
	}
	return nil
}

// flagString converts v to the text form of flag f, checking its type
// like nanoGPT's configurator checks overrides: an int flag takes an int,
// a float flag an int or a float, a bool flag True or False, a string flag
// a string.
func flagString(f *flag.Flag, v pyValue) (string, error) {
	var want any = ""
	if g, ok := f.Value.(flag.Getter); ok {
		want = g.Get()
	}
	switch want.(type) {
	case bool:
		if v.kind == pyBool {
			return strconv.FormatBool(v.b), nil
		}
		return "", fmt.Errorf("want True or False, got %s", v.typeName())
	case int, int64, uint, uint64:
		if v.kind == pyInt {
			return strconv.FormatInt(v.i, 10), nil
		}
		return "", fmt.Errorf("want an int, got %s", v.typeName())
	case float64:
		switch v.kind {
		case pyInt:
			return strconv.FormatInt(v.i, 10), nil
		case pyFloat:
			return strconv.FormatFloat(v.f, 'g', -1, 64), nil
		}
		return "", fmt.Errorf("want a number, got %s", v.typeName())
	case string:
		if v.kind == pyStr {
			return v.s, nil
		}
		return "", fmt.Errorf("want a string, got %s", v.typeName())
	}
	// a flag of its own type (--max_memory): its text form
	switch v.kind {
	case pyStr:
		return v.s, nil
	case pyInt:
		return strconv.FormatInt(v.i, 10), nil
	}
	return "", fmt.Errorf("want a string, got %s", v.typeName())
}

// pyValue is a Python value of the config subset.
type pyValue struct {
	kind pyKind
	i    int64
	f    float64
	s    string
	b    bool
}

type pyKind int

const (
	pyInt pyKind = iota
	pyFloat
	pyStr
	pyBool
	pyNone
)

func (v pyValue) typeName() string {
	return [...]string{"an int", "a float", "a string", "a bool", "None"}[v.kind]
}

// str returns Python's str(v).
func (v pyValue) str() string {
	switch v.kind {
	case pyInt:
		return strconv.FormatInt(v.i, 10)
	case pyFloat:
		return pyFloatString(v.f)
	case pyStr:
		return v.s
	case pyBool:
		if v.b {
			return "True"
		}
		return "False"
	}
	return "None"
}

// repr returns Python's repr(v), for messages.
func (v pyValue) repr() string {
	if v.kind == pyStr {
		return "'" + strings.ReplaceAll(v.s, "'", `\'`) + "'"
	}
	return v.str()
}

// pyFloatString formats f as Python's repr does: the shortest digits,
// in exponent form below 1e-4 and from 1e16 on, else with a ".0" when
// integral.
func pyFloatString(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		s := strconv.FormatFloat(f, 'e', -1, 64) // 1e-05, 1.5e+16
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		if len(exp) < 2 {
			exp = "0" + exp
		}
		if sign == '-' {
			return mant + "e-" + exp
		}
		return mant + "e+" + exp
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// tokKind is the kind of a token of a config line.
type tokKind int

const (
	tokName tokKind = iota
	tokNum
	tokStr
	tokOp
)

type pyToken struct {
	kind tokKind
	text string // the name, number text or operator; a string's value
}

// lexPython splits one line into tokens, dropping a trailing comment.
func lexPython(line string) ([]pyToken, error) {
	var toks []pyToken
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '#':
			return toks, nil
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(line) && (line[j] == '_' || line[j] >= 'a' && line[j] <= 'z' || line[j] >= 'A' && line[j] <= 'Z' || line[j] >= '0' && line[j] <= '9') {
				j++
			}
			if j < len(line) && (line[j] == '\'' || line[j] == '"') {
				return nil, fmt.Errorf("string prefix %s is not supported", line[i:j])
			}
			toks = append(toks, pyToken{tokName, line[i:j]})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9':
			j := i
			for j < len(line) {
				d := line[j]
				if d >= '0' && d <= '9' || d == '.' || d == '_' || d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' {
					j++
				} else if (d == '+' || d == '-') && (line[j-1] == 'e' || line[j-1] == 'E') {
					j++
				} else {
					break
				}
			}
			toks = append(toks, pyToken{tokNum, line[i:j]})
			i = j
		case c == '\'' || c == '"':
			if strings.HasPrefix(line[i:], `"""`) || strings.HasPrefix(line[i:], "'''") {
				return nil, errors.New("triple-quoted strings are not supported")
			}
			s, n, err := lexString(line[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, pyToken{tokStr, s})
			i += n
		default:
			op := ""
			for _, o := range []string{"**", "//", "+", "-", "*", "/", "%", "(", ")", "=", ",", "."} {
				if strings.HasPrefix(line[i:], o) {
					op = o
					break
				}
			}
			if op == "" || op == "=" && strings.HasPrefix(line[i:], "==") {
				return nil, fmt.Errorf("unexpected %q", string([]rune(line[i:])[0]))
			}
			toks = append(toks, pyToken{tokOp, op})
			i += len(op)
		}
	}
	return toks, nil
}

// lexString reads the quoted string at the start of s, returning its value
// and length. It knows the escapes \\ \' \" \n \t.
func lexString(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case q:
			return b.String(), i + 1, nil
		case '\\':
			if i+1 >= len(s) {
				return "", 0, errors.New("unterminated string")
			}
			i++
			switch e := s[i]; e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				return "", 0, fmt.Errorf(`escape \%c is not supported`, e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("unterminated string")
}

// pyParser evaluates an expression of the config subset.
type pyParser struct {
	toks     []pyToken
	pos      int
	fs       *flag.FlagSet
	imported map[string]bool
}

func (p *pyParser) peekOp(ops ...string) string {
	if p.pos < len(p.toks) && p.toks[p.pos].kind == tokOp {
		for _, o := range ops {
			if p.toks[p.pos].text == o {
				return o
			}
		}
	}
	return ""
}

func (p *pyParser) expect(op string) error {
	if p.peekOp(op) == "" {
		if p.pos < len(p.toks) {
			return fmt.Errorf("want %q, got %q", op, p.toks[p.pos].text)
		}
		return fmt.Errorf("want %q at the end of the line", op)
	}
	p.pos++
	return nil
}

// expr: term (('+'|'-') term)*
func (p *pyParser) expr() (pyValue, error) {
	v, err := p.term()
	for err == nil {
		op := p.peekOp("+", "-")
		if op == "" {
			break
		}
		p.pos++
		var w pyValue
		if w, err = p.term(); err == nil {
			v, err = binary(op, v, w)
		}
	}
	return v, err
}

// term: unary (('*'|'/'|'//'|'%') unary)*
func (p *pyParser) term() (pyValue, error) {
	v, err := p.unary()
	for err == nil {
		op := p.peekOp("*", "/", "//", "%")
		if op == "" {
			break
		}
		p.pos++
		var w pyValue
		if w, err = p.unary(); err == nil {
			v, err = binary(op, v, w)
		}
	}
	return v, err
}

// unary: ('-'|'+') unary | atom ['**' unary]
func (p *pyParser) unary() (pyValue, error) {
	if op := p.peekOp("-", "+"); op != "" {
		p.pos++
		v, err := p.unary()
		if err != nil {
			return v, err
		}
		return binary(op, pyValue{kind: pyInt}, v)
	}
	v, err := p.atom()
	if err == nil && p.peekOp("**") != "" {
		p.pos++
		var w pyValue
		if w, err = p.unary(); err == nil {
			v, err = binary("**", v, w)
		}
	}
	return v, err
}

// atom: number | string | True | False | None | name | call | '(' expr ')'
func (p *pyParser) atom() (pyValue, error) {
	if p.pos >= len(p.toks) {
		return pyValue{}, errors.New("missing value")
	}
	t := p.toks[p.pos]
	p.pos++
	switch t.kind {
	case tokNum:
		return parsePyNumber(t.text)
	case tokStr:
		v := pyValue{kind: pyStr, s: t.text}
		for p.pos < len(p.toks) && p.toks[p.pos].kind == tokStr { // 'a' 'b'
			v.s += p.toks[p.pos].text
			p.pos++
		}
		return v, nil
	case tokOp:
		if t.text == "(" {
			v, err := p.expr()
			if err == nil {
				err = p.expect(")")
			}
			return v, err
		}
		return pyValue{}, fmt.Errorf("unexpected %q", t.text)
	}
	switch t.text {
	case "True", "False":
		return pyValue{kind: pyBool, b: t.text == "True"}, nil
	case "None":
		return pyValue{kind: pyNone}, nil
	case "time":
		if !p.imported["time"] {
			return pyValue{}, errors.New("name time is not defined (add import time)")
		}
		for _, want := range []string{".", "time", "(", ")"} {
			if p.pos >= len(p.toks) || p.toks[p.pos].text != want {
				return pyValue{}, errors.New("only time.time() of module time is supported")
			}
			p.pos++
		}
		return pyValue{kind: pyFloat, f: float64(time.Now().UnixMicro()) / 1e6}, nil
	case "str", "int", "float":
		if p.peekOp("(") == "" {
			break
		}
		p.pos++
		v, err := p.expr()
		if err == nil {
			err = p.expect(")")
		}
		if err != nil {
			return v, err
		}
		return convert(t.text, v)
	}
	if p.peekOp("(", ".") != "" {
		return pyValue{}, fmt.Errorf("%s%s is not supported (config values are literals, flag names and arithmetic)", t.text, p.toks[p.pos].text)
	}
	f := p.fs.Lookup(t.text)
	if f == nil {
		return pyValue{}, fmt.Errorf("name %s is not defined", t.text)
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return pyValue{kind: pyStr, s: f.Value.String()}, nil
	}
	switch x := g.Get().(type) {
	case bool:
		return pyValue{kind: pyBool, b: x}, nil
	case int:
		return pyValue{kind: pyInt, i: int64(x)}, nil
	case uint64:
		if x > math.MaxInt64 {
			return pyValue{kind: pyFloat, f: float64(x)}, nil
		}
		return pyValue{kind: pyInt, i: int64(x)}, nil
	case float64:
		return pyValue{kind: pyFloat, f: x}, nil
	case string:
		return pyValue{kind: pyStr, s: x}, nil
	}
	return pyValue{kind: pyStr, s: f.Value.String()}, nil
}

// parsePyNumber parses a Python int or float literal.
func parsePyNumber(s string) (pyValue, error) {
	t := strings.ReplaceAll(s, "_", "")
	if strings.Contains(s, "__") || strings.HasSuffix(s, "_") {
		return pyValue{}, fmt.Errorf("invalid number %s", s)
	}
	if !strings.ContainsAny(t, ".eE") || strings.HasPrefix(strings.ToLower(t), "0x") {
		if len(t) > 1 && t[0] == '0' && strings.Trim(t, "0") != "" && !strings.ContainsAny(t[1:2], "xXoObB") {
			return pyValue{}, fmt.Errorf("invalid number %s (leading zeros)", s)
		}
		i, err := strconv.ParseInt(t, 0, 64)
		if err != nil {
			return pyValue{}, fmt.Errorf("invalid number %s", s)
		}
		return pyValue{kind: pyInt, i: i}, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || strings.ContainsAny(t, "xXpP") {
		return pyValue{}, fmt.Errorf("invalid number %s", s)
	}
	return pyValue{kind: pyFloat, f: f}, nil
}

// convert is Python's str(v), int(v) or float(v).
func convert(fn string, v pyValue) (pyValue, error) {
	switch fn {
	case "str":
		return pyValue{kind: pyStr, s: v.str()}, nil
	case "int":
		switch v.kind {
		case pyInt:
			return v, nil
		case pyBool:
			return pyValue{kind: pyInt, i: b2i(v.b)}, nil
		case pyFloat:
			if math.IsNaN(v.f) || math.Abs(v.f) >= 9.2e18 {
				return pyValue{}, fmt.Errorf("int(%s) is out of range", v.repr())
			}
			return pyValue{kind: pyInt, i: int64(v.f)}, nil
		case pyStr:
			i, err := strconv.ParseInt(strings.TrimSpace(v.s), 10, 64)
			if err != nil {
				return pyValue{}, fmt.Errorf("int(%s): not an integer", v.repr())
			}
			return pyValue{kind: pyInt, i: i}, nil
		}
	case "float":
		switch v.kind {
		case pyInt, pyBool, pyFloat:
			f, _ := num(v)
			return pyValue{kind: pyFloat, f: f}, nil
		case pyStr:
			f, err := strconv.ParseFloat(strings.TrimSpace(v.s), 64)
			if err != nil {
				return pyValue{}, fmt.Errorf("float(%s): not a number", v.repr())
			}
			return pyValue{kind: pyFloat, f: f}, nil
		}
	}
	return pyValue{}, fmt.Errorf("%s(%s) is not supported", fn, v.typeName())
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// num returns v as a float64 (ints and bools count as numbers).
func num(v pyValue) (float64, bool) {
	switch v.kind {
	case pyInt:
		return float64(v.i), true
	case pyBool:
		return float64(b2i(v.b)), true
	case pyFloat:
		return v.f, true
	}
	return 0, false
}

// binary applies a Python arithmetic operator.
func binary(op string, a, b pyValue) (pyValue, error) {
	if op == "+" && a.kind == pyStr && b.kind == pyStr {
		return pyValue{kind: pyStr, s: a.s + b.s}, nil
	}
	fa, okA := num(a)
	fb, okB := num(b)
	if !okA || !okB {
		return pyValue{}, fmt.Errorf("unsupported operand types for %s: %s and %s", op, strings.TrimPrefix(strings.TrimPrefix(a.typeName(), "an "), "a "), strings.TrimPrefix(strings.TrimPrefix(b.typeName(), "an "), "a "))
	}
	ints := a.kind != pyFloat && b.kind != pyFloat
	if ints {
		x, y := a.i, b.i
		if a.kind == pyBool {
			x = b2i(a.b)
		}
		if b.kind == pyBool {
			y = b2i(b.b)
		}
		if r, ok := intOp(op, x, y); ok {
			return pyValue{kind: pyInt, i: r}, nil
		}
		switch {
		case (op == "//" || op == "%") && y == 0:
			return pyValue{}, errors.New("division by zero")
		case op != "/" && !(op == "**" && y < 0):
			return pyValue{}, fmt.Errorf("integer overflow in %d %s %d", x, op, y)
		}
	}
	var r float64
	switch op {
	case "+":
		r = fa + fb
	case "-":
		r = fa - fb
	case "*":
		r = fa * fb
	case "/", "//", "%":
		if fb == 0 {
			return pyValue{}, errors.New("division by zero")
		}
		switch op {
		case "/":
			r = fa / fb
		case "//":
			r = math.Floor(fa / fb)
		default:
			r = fa - math.Floor(fa/fb)*fb
		}
	case "**":
		if fa == 0 && fb < 0 {
			return pyValue{}, errors.New("zero to a negative power")
		}
		r = math.Pow(fa, fb)
		if math.IsNaN(r) {
			return pyValue{}, errors.New("a negative number to a fractional power is complex")
		}
	}
	if math.IsInf(r, 0) && !math.IsInf(fa, 0) && !math.IsInf(fb, 0) {
		return pyValue{}, fmt.Errorf("float overflow in %s", op)
	}
	return pyValue{kind: pyFloat, f: r}, nil
}

// intOp applies op to two ints, reporting false on overflow, division by
// zero, true division (/ gives a float) and negative powers (a float).
func intOp(op string, x, y int64) (int64, bool) {
	const lim = 1 << 62 // well inside int64: the checks below stay simple
	switch op {
	case "+", "-":
		if y < -lim || y > lim || x < -lim || x > lim {
			return 0, false
		}
		if op == "-" {
			return x - y, true
		}
		return x + y, true
	case "*":
		if x != 0 && (math.Abs(float64(x))*math.Abs(float64(y)) >= lim) {
			return 0, false
		}
		return x * y, true
	case "//", "%":
		if y == 0 {
			return 0, false
		}
		q, m := x/y, x%y
		if m != 0 && (m < 0) != (y < 0) { // Python floors
			q--
			m += y
		}
		if op == "//" {
			return q, true
		}
		return m, true
	case "**":
		switch {
		case y < 0:
			return 0, false
		case y == 0 || x == 1:
			return 1, true
		case x == 0:
			return 0, true
		case x == -1:
			return 1 - 2*(y%2), true
		}
		r := int64(1)
		for range y { // |x| ≥ 2: at most 62 rounds before the limit
			if math.Abs(float64(r))*math.Abs(float64(x)) >= lim {
				return 0, false
			}
			r *= x
		}
		return r, true
	}
	return 0, false
}
