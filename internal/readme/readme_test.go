package readme

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// root is the repository root, seen from this package's directory (go test
// runs tests in the package's directory).
const root = "../.."

// block is a fenced code block of a Markdown file.
type block struct {
	file string // path relative to the repository root
	line int    // 1-based line of the opening fence
	text string // the lines between the fences
}

// codeBlocks returns the blocks of md whose fence names lang ("```go").
func codeBlocks(file, md, lang string) []block {
	var out []block
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```"+lang {
			continue
		}
		start := i
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		out = append(out, block{file: file, line: start + 1, text: strings.Join(body, "\n")})
	}
	return out
}

// normalize returns the lines of src without their leading and trailing
// white space, blank lines left out: the form in which a README block and
// an Example body are compared (the README indents a block by its own
// rule, gofmt the Example's by its nesting).
func normalize(src string) []string {
	var out []string
	for _, l := range strings.Split(src, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// contains reports whether want appears in have as consecutive lines.
func contains(have, want []string) bool {
	if len(want) == 0 {
		return false
	}
	for i := 0; i+len(want) <= len(have); i++ {
		if slices.Equal(have[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

// source is a piece of Go code a README block may quote: an Example
// function's body or a whole program under examples/.
type source struct {
	name  string // "nn.ExampleNewGPT (nn/example_test.go)", "examples/basics/main.go"
	lines []string
}

// repoGoFiles returns the .go files of the repository that the default
// build (GOOS/GOARCH of this machine, no tags) compiles, relative to root,
// skipping testdata folders and scripts/ (whose Go files belong to
// separate tools).
func repoGoFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || rel == "scripts") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		ok, err := build.Default.MatchFile(filepath.Dir(path), d.Name())
		if err != nil {
			return err
		}
		if ok {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// exampleBodies returns the body of every Example function in the test
// files of the default build, and every program under examples/.
func exampleBodies(t *testing.T) (examples, programs []source) {
	t.Helper()
	fset := token.NewFileSet()
	for _, rel := range repoGoFiles(t) {
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(rel, "examples/") && !strings.HasSuffix(rel, "_test.go") {
			programs = append(programs, source{name: rel, lines: normalize(string(src))})
		}
		if !strings.HasSuffix(rel, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Example") {
				continue
			}
			lo := fset.Position(fn.Body.Lbrace).Offset + 1
			hi := fset.Position(fn.Body.Rbrace).Offset
			examples = append(examples, source{
				name:  f.Name.Name + "." + fn.Name.Name + " (" + rel + ")",
				lines: normalize(string(src[lo:hi])),
			})
		}
	}
	return examples, programs
}

// readmes returns the README files of the repository, relative to root.
func readmes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"README.md", "*/README.md", "*/*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// quoted returns the name of the source that holds b, or "" when none
// does. A block that starts with "package " must be in a program under
// examples/; any other must be in an Example function's body.
func quoted(b block, examples, programs []source) string {
	want := normalize(b.text)
	pool := examples
	if len(want) > 0 && strings.HasPrefix(want[0], "package ") {
		pool = programs
	}
	for _, s := range pool {
		if contains(s.lines, want) {
			return s.name
		}
	}
	return ""
}

// TestGoBlocksAreExamples fails for every Go block of a README that no
// Example function (or program under examples/) holds: such a block is
// compiled by nothing and drifts from the API unseen.
func TestGoBlocksAreExamples(t *testing.T) {
	examples, programs := exampleBodies(t)
	if len(examples) == 0 || len(programs) == 0 {
		t.Fatalf("found %d Example functions and %d example programs; the repository walk is broken", len(examples), len(programs))
	}
	var n int
	for _, rel := range readmes(t) {
		md, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range codeBlocks(rel, string(md), "go") {
			n++
			if name := quoted(b, examples, programs); name != "" {
				t.Logf("%s:%d: in %s", b.file, b.line, name)
				continue
			}
			t.Errorf("%s:%d: this Go block is in no Example function's body (nor, for a program, under examples/); "+
				"copy it into an Example in the package's example_test.go, with an // Output: comment where it can run:\n%s",
				b.file, b.line, b.text)
		}
	}
	if n == 0 {
		t.Fatal("README.md has no Go code blocks: the extraction is broken")
	}
}

// TestQuotedRejects checks the matcher on blocks that must not match: a
// changed line, lines out of order, a fragment from two Examples, and a
// program matched against Example bodies.
func TestQuotedRejects(t *testing.T) {
	examples := []source{
		{name: "a", lines: normalize("x := f(1)\n\ty := g(x)\n\tfmt.Println(y)")},
		{name: "b", lines: normalize("z := h()")},
	}
	programs := []source{{name: "p", lines: normalize("package main\n\nfunc main() {\n\tx := f(1)\n}")}}
	for _, c := range []struct {
		text, want string
	}{
		{"  x := f(1)\n\n  y := g(x)", "a"}, // indentation and blank lines do not matter
		{"fmt.Println(y)", "a"},
		{"package main\nfunc main() {", "p"},
		{"x := f(2)", ""},
		{"y := g(x)\nx := f(1)", ""},
		{"fmt.Println(y)\nz := h()", ""},
		{"func main() {\n\tx := f(1)\n}", ""}, // not a whole program: compared with the Examples
		{"package main\nx := f(1)", ""},
		{"", ""},
	} {
		if got := quoted(block{text: c.text}, examples, programs); got != c.want {
			t.Errorf("quoted(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// TestCodeBlocks checks the fence extraction.
func TestCodeBlocks(t *testing.T) {
	md := "text\n```go\na := 1\n\n\tb := 2\n```\n```sh\nls\n```\n  ```go\nc\n  ```\n"
	got := codeBlocks("x.md", md, "go")
	if len(got) != 2 || got[0].text != "a := 1\n\n\tb := 2" || got[0].line != 2 || got[1].text != "c" || got[1].line != 10 {
		t.Errorf("codeBlocks = %+v", got)
	}
}
