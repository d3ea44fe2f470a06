// Package examples holds Wick's notebook (wick.ipynb) and example programs
// (one directory each). Its test runs the notebook's code cells as a Go
// program.
package examples

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var keepNotebook = flag.String("notebook-out", "", "directory to keep the generated program and the cells' displayed values in")

// notebook is the part of nbformat 4 that the test reads.
type notebook struct {
	NBFormat      int `json:"nbformat"`
	NBFormatMinor int `json:"nbformat_minor"`
	Metadata      struct {
		Kernelspec struct {
			Name     string `json:"name"`
			Language string `json:"language"`
		} `json:"kernelspec"`
	} `json:"metadata"`
	Cells []struct {
		ID             string          `json:"id"`
		CellType       string          `json:"cell_type"`
		Metadata       json.RawMessage `json:"metadata"`
		Source         json.RawMessage `json:"source"` // a string or a list of lines
		Outputs        json.RawMessage `json:"outputs"`
		ExecutionCount json.RawMessage `json:"execution_count"`
	} `json:"cells"`
}

func readNotebook(t *testing.T, path string) (nb notebook, code []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		t.Fatalf("%s is not valid JSON: %v", path, err)
	}
	ids := map[string]bool{}
	cellID := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for i, c := range nb.Cells {
		// The fields nbformat 4.5's schema requires.
		if !cellID.MatchString(c.ID) || ids[c.ID] {
			t.Errorf("cell %d: id %q is missing, malformed or repeated", i, c.ID)
		}
		ids[c.ID] = true
		if c.Metadata == nil || c.Source == nil {
			t.Errorf("cell %d: metadata or source missing", i)
		}
		if (c.CellType == "code") != (c.Outputs != nil && c.ExecutionCount != nil) {
			t.Errorf("cell %d: a %s cell must have outputs and execution_count exactly when it is code", i, c.CellType)
		}
		var src string
		var lines []string
		if err := json.Unmarshal(c.Source, &lines); err == nil {
			src = strings.Join(lines, "")
		} else if err := json.Unmarshal(c.Source, &src); err != nil {
			t.Fatalf("cell %d: source is neither a string nor a list of strings", i)
		}
		if c.CellType == "code" {
			code = append(code, src)
		}
	}
	return nb, code
}

// chunk is one top-level item of a cell: a declaration (import, func, type,
// var, const) or a run of statements.
type chunk struct {
	decl bool
	src  string
	line int // 1-based line of the chunk in its cell
}

// splitCell cuts a cell into top-level items the way gomacro reads them: a
// new item starts at each token that begins a line outside any brackets.
func splitCell(src string) ([]chunk, error) {
	fset := token.NewFileSet()
	file := fset.AddFile("cell", -1, len(src))
	var s scanner.Scanner
	var errs scanner.ErrorList
	s.Init(file, []byte(src), func(pos token.Position, msg string) { errs.Add(pos, msg) }, 0)
	type tok struct {
		tok  token.Token
		lit  string
		off  int
		line int
	}
	var toks []tok
	for {
		pos, tk, lit := s.Scan()
		if tk == token.EOF {
			break
		}
		p := fset.Position(pos)
		toks = append(toks, tok{tk, lit, p.Offset, p.Line})
	}
	if errs.Len() > 0 {
		return nil, errs.Err()
	}
	depth, lastLine := 0, 0
	var starts []int // indexes into toks
	for i, tk := range toks {
		if tk.tok == token.SEMICOLON && tk.lit == "\n" {
			continue // automatic semicolons carry the position of the newline
		}
		if depth == 0 && tk.line != lastLine {
			starts = append(starts, i)
		}
		lastLine = tk.line
		switch tk.tok {
		case token.LPAREN, token.LBRACE, token.LBRACK:
			depth++
		case token.RPAREN, token.RBRACE, token.RBRACK:
			depth--
		}
	}
	var chunks []chunk
	for k, i := range starts {
		end := len(src)
		if k+1 < len(starts) {
			end = toks[starts[k+1]].off
		}
		// start at the beginning of the token's line
		begin := strings.LastIndexByte(src[:toks[i].off], '\n') + 1
		decl := false
		switch toks[i].tok {
		case token.IMPORT, token.TYPE, token.VAR, token.CONST:
			decl = true
		case token.FUNC:
			// func Name(...) or func (recv) Name(...) is a declaration;
			// func() {...}() is a statement.
			decl = i+1 < len(toks) && (toks[i+1].tok == token.IDENT ||
				toks[i+1].tok == token.LPAREN && i+2 < len(toks) && toks[i+2].tok == token.IDENT)
		}
		c := chunk{decl: decl, src: src[begin:end], line: toks[i].line}
		if n := len(chunks); n > 0 && !decl && !chunks[n-1].decl {
			chunks[n-1].src += c.src // consecutive statements stay together
			continue
		}
		chunks = append(chunks, c)
	}
	return chunks, nil
}

// program is a notebook translated into one Go main package.
type program struct {
	module  string   // the module's path, for the notebook's relative imports
	imports []string // import specs
	decls   []string
	body    []string // main's statements
}

// addStatements appends a cell's statements to main. The value of a final
// expression statement is displayed (as gophernotes shows a cell's value)
// unless display[cell] is false, and each variable the statements declare
// at their top level is marked used, because the interpreter does not
// reject unused variables.
func (p *program) addStatements(cell int, c chunk, display bool) error {
	const head = "package p\nfunc _() {\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", head+c.src+"\n}\n", 0)
	if err != nil {
		return fmt.Errorf("cell %d: %v", cell, err)
	}
	if err := interpreterFriendly(f); err != nil {
		return fmt.Errorf("cell %d: %v", cell, err)
	}
	body := f.Decls[0].(*ast.FuncDecl).Body.List
	src := c.src
	var used []string
	for _, st := range body {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, l := range st.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
						used = append(used, id.Name)
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := st.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, id := range s.(*ast.ValueSpec).Names {
						if id.Name != "_" {
							used = append(used, id.Name)
						}
					}
				}
			}
		}
	}
	if last, ok := body[len(body)-1].(*ast.ExprStmt); ok && display {
		start := fset.Position(last.Pos()).Offset - len(head)
		end := fset.Position(last.End()).Offset - len(head)
		src = src[:start] + fmt.Sprintf("__display(%d, %s)", cell, src[start:end]) + src[end:]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "//line cell%d:%d\n%s\n", cell, c.line, src)
	sort.Strings(used)
	for _, u := range used {
		fmt.Fprintf(&b, "\t_ = %s\n", u)
	}
	p.body = append(p.body, b.String())
	return nil
}

func (p *program) addDecl(cell int, c chunk) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package p\n"+c.src, 0)
	if err != nil {
		return fmt.Errorf("cell %d: %v", cell, err)
	}
	if err := interpreterFriendly(f); err != nil {
		return fmt.Errorf("cell %d: %v", cell, err)
	}
	if len(f.Imports) > 0 {
		for _, imp := range f.Imports {
			spec := imp.Path.Value
			if path, _ := strconv.Unquote(spec); strings.HasPrefix(path, "../") {
				// gomacro resolves a relative import against the
				// notebook's folder, examples/: ../tensor is this
				// module's tensor package.
				spec = strconv.Quote(p.module + "/" + strings.TrimPrefix(path, "../"))
			}
			if imp.Name != nil {
				spec = imp.Name.Name + " " + spec
			}
			p.imports = append(p.imports, spec)
		}
		return nil
	}
	p.decls = append(p.decls, fmt.Sprintf("//line cell%d:%d\n%s", cell, c.line, c.src))
	return nil
}

// interpreterFriendly rejects what gomacro cannot run in a cell: generic
// declarations, packages whose API is generic or unsafe, the min, max and
// clear builtins (Go 1.21) and ranging over an integer (Go 1.22).
func interpreterFriendly(f *ast.File) error {
	var err error
	ast.Inspect(f, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *ast.ImportSpec:
			switch path, _ := strconv.Unquote(x.Path.Value); path {
			case "unsafe", "slices", "maps", "iter", "cmp", "sync/atomic":
				err = fmt.Errorf("import %q: gomacro cannot use this package", path)
			}
		case *ast.FuncType:
			if x.TypeParams != nil && len(x.TypeParams.List) > 0 {
				err = fmt.Errorf("generic function: gomacro cannot import or run generics reliably")
			}
		case *ast.TypeSpec:
			if x.TypeParams != nil && len(x.TypeParams.List) > 0 {
				err = fmt.Errorf("generic type %s", x.Name.Name)
			}
		case *ast.CallExpr:
			if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "min" || id.Name == "max" || id.Name == "clear") {
				err = fmt.Errorf("builtin %s is newer than gomacro", id.Name)
			}
		case *ast.RangeStmt:
			if lit, ok := x.X.(*ast.BasicLit); ok && lit.Kind == token.INT {
				err = fmt.Errorf("range over an integer is newer than gomacro")
			}
		}
		return true
	})
	return err
}

func (p *program) source() string {
	var b strings.Builder
	b.WriteString("// Code generated from examples/wick.ipynb by notebook_test.go. DO NOT EDIT.\n\npackage main\n\nimport (\n")
	seen := map[string]bool{}
	for _, imp := range p.imports {
		if !seen[imp] {
			seen[imp] = true
			b.WriteString("\t" + imp + "\n")
		}
	}
	b.WriteString(displayImports)
	b.WriteString(")\n\n")
	for _, d := range p.decls {
		b.WriteString(d + "\n\n")
	}
	b.WriteString("func main() {\n")
	for _, s := range p.body {
		b.WriteString(s)
	}
	b.WriteString("\t__cell(-1)\n}\n")
	b.WriteString(displayHelpers)
	return b.String()
}

// displayImports are the imports of displayHelpers, renamed so that they
// cannot clash with the notebook's. The display helpers call what
// gophernotes calls to show a value: the HTML, SVG, PNG and Markdown
// methods when present, String otherwise. They check that each
// representation is well-formed and write it into $NOTEBOOK_OUT when set.
const displayImports = `	__bytes "bytes"
	__xml "encoding/xml"
	__fmt "fmt"
	__png "image/png"
	__io "io"
	__os "os"
	__filepath "path/filepath"
	__strings "strings"
`

const displayHelpers = `
func __cell(n int) {
	if n < 0 {
		__fmt.Println("[notebook] done")
		return
	}
	__fmt.Printf("[notebook] cell %d\n", n)
}

func __save(cell int, ext string, data []byte) {
	dir := __os.Getenv("NOTEBOOK_OUT")
	if dir == "" {
		return
	}
	if err := __os.WriteFile(__filepath.Join(dir, __fmt.Sprintf("cell%02d.%s", cell, ext)), data, 0o644); err != nil {
		panic(err)
	}
}

func __wellFormed(cell int, kind, s string) {
	d := __xml.NewDecoder(__strings.NewReader(s))
	d.Strict = true
	for {
		_, err := d.Token()
		if err == __io.EOF {
			return
		}
		if err != nil {
			panic(__fmt.Sprintf("cell %d: %s display is not well-formed: %v", cell, kind, err))
		}
	}
}

func __display(cell int, v any) {
	shown := false
	if h, ok := v.(interface{ HTML() string }); ok {
		s := h.HTML()
		__wellFormed(cell, "HTML", s)
		__save(cell, "html", []byte(s))
		__fmt.Printf("[notebook] cell %d displays text/html (%d bytes)\n", cell, len(s))
		shown = true
	}
	if h, ok := v.(interface{ SVG() string }); ok {
		s := h.SVG()
		if !__strings.HasPrefix(s, "<svg") {
			panic(__fmt.Sprintf("cell %d: SVG display does not start with <svg", cell))
		}
		__wellFormed(cell, "SVG", s)
		__save(cell, "svg", []byte(s))
		__fmt.Printf("[notebook] cell %d displays image/svg+xml (%d bytes)\n", cell, len(s))
		shown = true
	}
	if h, ok := v.(interface{ PNG() []byte }); ok {
		b := h.PNG()
		if _, err := __png.Decode(__bytes.NewReader(b)); err != nil {
			panic(__fmt.Sprintf("cell %d: PNG display: %v", cell, err))
		}
		__save(cell, "png", b)
		__fmt.Printf("[notebook] cell %d displays image/png (%d bytes)\n", cell, len(b))
		shown = true
	}
	if h, ok := v.(interface{ Markdown() string }); ok {
		s := h.Markdown()
		__save(cell, "md", []byte(s))
		shown = true
	}
	if !shown {
		s := __fmt.Sprint(v)
		__save(cell, "txt", []byte(s))
		__fmt.Printf("[notebook] cell %d displays text/plain: %s\n", cell, s)
	}
}
`

// translate turns the code cells into one program. noDisplay lists the
// cells whose final expression is a call without exactly one result, which
// are then run as plain statements.
func translate(module string, cells []string, noDisplay map[int]bool) (*program, error) {
	p := &program{module: module}
	for i, src := range cells {
		cell := i + 1
		chunks, err := splitCell(src)
		if err != nil {
			return nil, fmt.Errorf("cell %d: %v", cell, err)
		}
		p.body = append(p.body, fmt.Sprintf("\t__cell(%d)\n", cell))
		for k, c := range chunks {
			if c.decl {
				err = p.addDecl(cell, c)
			} else {
				err = p.addStatements(cell, c, k == len(chunks)-1 && !noDisplay[cell])
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// noValue matches the compiler's complaint about displaying a final call
// that has no result or several (gophernotes shows nothing, or each value).
var noValue = regexp.MustCompile(`cell(\d+):\d+(?::\d+)?: .*(\(no value\) used as value|multiple-value .* in single-value context)`)

// modulePath returns the module path declared in the go.mod file in dir.
func modulePath(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1]
		}
	}
	t.Fatalf("no module line in %s/go.mod", dir)
	return ""
}

// TestNotebookRuns runs examples/wick.ipynb's code cells in order as a Go
// program, built with go run against this module, and checks that it
// succeeds and that every displayed value renders.
func TestNotebookRuns(t *testing.T) {
	nb, cells := readNotebook(t, "wick.ipynb")
	if nb.NBFormat != 4 || nb.NBFormatMinor < 5 || nb.Metadata.Kernelspec.Name != "gophernotes" {
		t.Fatalf("nbformat %d.%d, kernel %q: want nbformat 4.5 or later and the gophernotes kernel", nb.NBFormat, nb.NBFormatMinor, nb.Metadata.Kernelspec.Name)
	}
	if len(cells) == 0 {
		t.Fatal("no code cells")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := t.TempDir()
	if *keepNotebook != "" {
		dir, out = *keepNotebook, *keepNotebook
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mainGo := filepath.Join(dir, "main.go")

	module := modulePath(t, root)
	noDisplay := map[int]bool{}
	severalResults := map[int]bool{}
	var output []byte
	for attempt := 0; ; attempt++ {
		p, err := translate(module, cells, noDisplay)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(mainGo, []byte(p.source()), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "run", mainGo)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "NOTEBOOK_OUT="+out)
		output, err = cmd.CombinedOutput()
		if err == nil {
			break
		}
		// A final call without results cannot be displayed: run it as
		// a statement, as the interpreter does, and try again.
		m := noValue.FindAllSubmatch(output, -1)
		if len(m) == 0 || attempt > len(cells) {
			t.Fatalf("the notebook failed: %v\n%s", err, output)
		}
		for _, sm := range m {
			n, _ := strconv.Atoi(string(sm[1]))
			noDisplay[n] = true
			if strings.HasPrefix(string(sm[2]), "multiple-value") {
				severalResults[n] = true
			}
		}
	}
	t.Logf("notebook output:\n%s", output)

	// gophernotes shows every result of a final call, as "55 <nil>" after
	// a final fmt.Println: a cell should end with the value to show.
	for n := range severalResults {
		t.Errorf("cell %d ends with a call of several results, which gophernotes would show", n)
	}

	// Every code cell ran, and the rich displays the notebook relies on
	// were produced.
	for i := range cells {
		if !bytes.Contains(output, []byte(fmt.Sprintf("[notebook] cell %d\n", i+1))) {
			t.Errorf("cell %d did not run", i+1)
		}
	}
	if !bytes.Contains(output, []byte("[notebook] done")) {
		t.Error("the program did not reach the end of the notebook")
	}
	for _, want := range []string{"displays text/html", "displays image/svg+xml", "displays image/png"} {
		if !bytes.Contains(output, []byte(want)) {
			t.Errorf("no cell %s", want)
		}
	}
}

func TestSplitCell(t *testing.T) {
	src := "import \"fmt\"\n\nconst s = `a\nb`\n\n// f doubles.\nfunc f(x int) int {\n\treturn 2 * x\n}\n\ny := f(2)\nfor i := 0; i < 2; i++ {\n\ty++\n}\nfunc() { y++ }()\nvar z = 3\ny\n"
	chunks, err := splitCell(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range chunks {
		kind := "stmt"
		if c.decl {
			kind = "decl"
		}
		got = append(got, fmt.Sprintf("%s@%d:%s", kind, c.line, strings.Fields(c.src)[0]))
	}
	want := "decl@1:import decl@3:const decl@7:func stmt@11:y decl@16:var stmt@17:y"
	if strings.Join(got, " ") != want {
		t.Errorf("chunks = %v, want %s", got, want)
	}
	p, err := translate("example.com/m", []string{src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := p.source()
	for _, want := range []string{"\t\"fmt\"\n", "__display(1, y)", "_ = y\n", "func f(x int) int", "var z = 3"} {
		if !strings.Contains(s, want) {
			t.Errorf("translation lacks %q:\n%s", want, s)
		}
	}
	p, err = translate("example.com/m", []string{"import (\n\t\"fmt\"\n\tw \"../tensor\"\n)\n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := p.source(); !strings.Contains(s, "\tw \"example.com/m/tensor\"\n") || !strings.Contains(s, "\t\"fmt\"\n") {
		t.Errorf("relative import not mapped to the module:\n%s", s)
	}
	for _, bad := range []string{
		"import \"slices\"",
		"func f[T any](x T) T { return x }",
		"type B[T any] struct{ v T }",
		"x := max(1, 2)",
		"for i := range 3 {\n\t_ = i\n}",
	} {
		if _, err := translate("example.com/m", []string{bad}, nil); err == nil {
			t.Errorf("translate accepted %q, which gomacro cannot run", bad)
		}
	}
}
