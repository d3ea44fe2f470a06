package cuda

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// exportedAPI returns the exported top-level declarations (with their
// signatures and doc comments) of the package's non-test files whose build
// constraint line is constraint.
func exportedAPI(t *testing.T, constraint string) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	api := map[string]string{}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, "_test.go") || !strings.HasPrefix(string(src), constraint+"\n") {
			continue
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		show := func(node any) string {
			var b bytes.Buffer
			printer.Fprint(&b, fset, node)
			return b.String()
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && (d.Recv == nil || show(d.Recv) == "(e *Error)") {
					key := d.Name.Name
					if d.Recv != nil {
						key = "Error." + key
					}
					api[key] = d.Doc.Text() + show(d.Type)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							api[s.Name.Name] = d.Doc.Text() + show(s.Type)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								api[n.Name] = d.Doc.Text()
							}
						}
					}
				}
			}
		}
	}
	return api
}

// TestStubInSync checks that the GPU build (files with the cuda tag) and
// the stub (stub.go) declare the same exported API with the same
// documentation.
func TestStubInSync(t *testing.T) {
	gpu, stub := exportedAPI(t, "//go:build cuda"), exportedAPI(t, "//go:build !cuda")
	if len(stub) == 0 {
		t.Fatal("found no exported declarations in the stub")
	}
	var names []string
	for n := range gpu {
		names = append(names, n)
	}
	for n := range stub {
		if _, ok := gpu[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		g, ok1 := gpu[n]
		s, ok2 := stub[n]
		switch {
		case !ok1:
			t.Errorf("%s is declared by stub.go only", n)
		case !ok2:
			t.Errorf("%s is declared by the cuda build only (add it to stub.go)", n)
		case g != s:
			t.Errorf("%s differs:\ncuda build: %s\nstub:       %s", n, g, s)
		}
	}
}
