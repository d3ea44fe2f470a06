package plugintest

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// moduleRoot returns the directory holding go.mod above the test's working
// directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// publicPackages returns the directories, relative to root, of the
// importable packages a notebook can use: every package outside internal/,
// cmd/, examples/, scripts/ and testdata/ that has Go files in the default
// build.
func publicPackages(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		first := strings.Split(rel, string(filepath.Separator))[0]
		switch {
		case rel == ".":
			return nil
		case strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata":
			return filepath.SkipDir
		case first == "cmd" || first == "examples" || first == "scripts" || first == "csrc":
			return filepath.SkipDir
		case d.Name() == "internal": // internal at any depth (tokenizer/internal/...) is not public
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
			return filepath.SkipDir // a nested module
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if err == nil && pkg.Name != "main" && len(pkg.GoFiles) > 0 {
			dirs = append(dirs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dirs)
	return dirs
}

// TestPublicAPIIsInterpreterFriendly fails on any exported generic
// declaration or exported use of unsafe.Pointer in the default build of the
// public packages: gomacro (gophernotes' interpreter) cannot import them.
func TestPublicAPIIsInterpreterFriendly(t *testing.T) {
	root := moduleRoot(t)
	dirs := publicPackages(t, root)
	for _, want := range []string{"autograd", "tensor", "plot"} {
		if !contains(dirs, want) {
			t.Fatalf("public package %s not found (found %v)", want, dirs)
		}
	}
	t.Logf("checked packages: %v", dirs)
	for _, dir := range dirs {
		pkg, err := build.Default.ImportDir(filepath.Join(root, dir), 0)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, name := range pkg.GoFiles {
			path := filepath.Join(root, dir, name)
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range apiProblems(fset, f) {
				t.Errorf("%s", p)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// apiProblems returns one message per exported generic declaration or
// exported mention of unsafe.Pointer in f.
func apiProblems(fset *token.FileSet, f *ast.File) []string {
	unsafeName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "unsafe" {
			unsafeName = "unsafe"
			if imp.Name != nil {
				unsafeName = imp.Name.Name
			}
		}
	}
	var problems []string
	report := func(pos token.Pos, format string, args ...any) {
		problems = append(problems, fset.Position(pos).String()+": "+fmt.Sprintf(format, args...))
	}
	// checkType reports unsafe.Pointer, type sets (constraint interfaces)
	// and anonymous generic function types inside an exported type
	// expression.
	checkType := func(what string, e ast.Expr) {
		if e == nil {
			return
		}
		ast.Inspect(e, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && unsafeName != "" && id.Name == unsafeName && x.Sel.Name == "Pointer" {
					report(x.Pos(), "%s exposes unsafe.Pointer", what)
				}
			case *ast.InterfaceType:
				for _, m := range x.Methods.List {
					if len(m.Names) == 0 {
						if _, isBinary := m.Type.(*ast.BinaryExpr); isBinary {
							report(m.Pos(), "%s is a constraint interface (type union)", what)
						}
						if u, isUnary := m.Type.(*ast.UnaryExpr); isUnary && u.Op == token.TILDE {
							report(m.Pos(), "%s is a constraint interface (~ term)", what)
						}
					}
				}
			}
			return true
		})
	}
	// checkTypeExpr is checkType, except that the unexported fields of a
	// declared struct type are skipped: they are not part of the API.
	var checkTypeExpr func(what string, e ast.Expr)
	checkTypeExpr = func(what string, e ast.Expr) {
		if st, ok := e.(*ast.StructType); ok {
			for _, fld := range st.Fields.List {
				exported := len(fld.Names) == 0
				name := ""
				for _, nm := range fld.Names {
					exported = exported || nm.IsExported()
					name = nm.Name
				}
				if exported {
					checkTypeExpr(what+" field "+name, fld.Type)
				}
			}
			return
		}
		checkType(what, e)
	}
	checkFields := func(what string, fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, fld := range fl.List {
			checkTypeExpr(what, fld.Type)
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil {
				recv := receiverType(d.Recv.List[0].Type)
				if recv == nil || !recv.IsExported() {
					continue // methods of unexported types are not importable
				}
				name = recv.Name + "." + name
				if _, generic := recvGeneric(d.Recv.List[0].Type); generic {
					report(d.Pos(), "method %s has a generic receiver", name)
				}
			}
			if d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0 {
				report(d.Pos(), "func %s is generic", name)
			}
			checkFields("func "+name+" parameter", d.Type.Params)
			checkFields("func "+name+" result", d.Type.Results)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if s.TypeParams != nil && len(s.TypeParams.List) > 0 {
						report(s.Pos(), "type %s is generic", s.Name.Name)
					}
					checkTypeExpr("type "+s.Name.Name, s.Type)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							checkTypeExpr("var/const "+n.Name, s.Type)
						}
					}
				}
			}
		}
	}
	return problems
}

// receiverType returns the base type name of a method receiver.
func receiverType(e ast.Expr) *ast.Ident {
	id, _ := recvGeneric(e)
	return id
}

func recvGeneric(e ast.Expr) (*ast.Ident, bool) {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.Ident:
		return x, false
	case *ast.IndexExpr:
		id, _ := x.X.(*ast.Ident)
		return id, true
	case *ast.IndexListExpr:
		id, _ := x.X.(*ast.Ident)
		return id, true
	}
	return nil, false
}

// TestAPIProblemsDetects makes sure the checker above finds each kind of
// violation, so that TestPublicAPIIsInterpreterFriendly can fail.
func TestAPIProblemsDetects(t *testing.T) {
	const src = `package p

import u "unsafe"

func Map[T any](x []T) []T { return x }
func mapInternal[T any](x []T) []T { return x }
type Box[T any] struct{ V T }
type box[T any] struct{ V T }
func (b *Box[T]) Get() T { return b.V }
func Raw(p u.Pointer) {}
func Data() (u.Pointer, int) { return nil, 0 }
type Handle struct {
	Ptr u.Pointer
	ptr u.Pointer
}
type Number interface{ ~float32 | ~int64 }
var Addr u.Pointer
type T struct{ ptr u.Pointer }
func (t *T) raw() u.Pointer { return t.ptr }
func (t T) Ok(x int) int { return x }
func internal(p u.Pointer) {}
type hidden struct{ P u.Pointer }
func (h hidden) Exported() u.Pointer { return h.P }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := apiProblems(fset, f)
	want := []string{
		"p.go:5:1: func Map is generic",
		"p.go:7:6: type Box is generic",
		"p.go:9:1: method Box.Get has a generic receiver",
		"p.go:10:12: func Raw parameter exposes unsafe.Pointer",
		"p.go:11:14: func Data result exposes unsafe.Pointer",
		"p.go:13:6: type Handle field Ptr exposes unsafe.Pointer",
		"p.go:16:24: type Number is a constraint interface (type union)",
		"p.go:17:10: var/const Addr exposes unsafe.Pointer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
