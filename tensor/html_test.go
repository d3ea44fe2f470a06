package tensor_test

import (
	"encoding/xml"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wickml/wick/internal/golden"
	"github.com/wickml/wick/tensor"
)

// displayGolden compares got with testdata/<dir>/<name> (-update-golden
// rewrites it).
func displayGolden(t *testing.T, dir, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", dir, name), got)
}

// checkXML fails unless s is well-formed XML (so the browser's HTML parser
// sees the structure we meant).
func checkXML(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, s)
		}
	}
}

func TestHTMLGolden(t *testing.T) {
	w := tensor.New([]float32{0.5, -1.25, 2, 3.75, 10, -0.125}, 2, 3).RequiresGrad()
	cases := []struct {
		name string
		t    *tensor.Tensor
	}{
		{"scalar", tensor.New([]float32{1.5, 2}).Sum()}, // 0-d
		{"vector", tensor.New([]float32{1, 2.5, -3}, 3)},
		{"matrix", tensor.New([]float32{1, 2, 3, 4, 5, 6}, 2, 3)},
		{"ints", tensor.FromInts([]int{3, -1, 40, 7}, 2, 2)},
		{"requires_grad", w},
		{"grad_fn", w.MulScalar(2)},
		{"empty", tensor.Zeros(0, 3)},
		{"3d", tensor.Arange(0, 24, 1).Reshape(2, 3, 4)},
		{"large", tensor.Arange(0, 2000, 1).Reshape(40, 50)},
	}
	for _, c := range cases {
		got := c.t.HTML()
		checkXML(t, got)
		displayGolden(t, "html", c.name+".html.golden", got)
	}
}

func TestHTMLContent(t *testing.T) {
	h := tensor.New([]float32{1, 2, 3, 4}, 2, 2).HTML()
	if strings.Count(h, "<tr>") != 2 || strings.Count(h, "<td>") != 4 {
		t.Errorf("2x2 tensor should be a 2x2 table: %s", h)
	}
	big := tensor.Arange(0, 2000, 1).Reshape(40, 50).HTML()
	for _, want := range []string{"shape=[40 50]", "dtype=float32", "device=cpu", "<td>0</td><td>1999</td><td>999.5</td><td>577.5</td>", "..."} {
		if !strings.Contains(big, want) {
			t.Errorf("large tensor HTML lacks %q:\n%s", want, big)
		}
	}
	if strings.Count(big, "<td>") != 4 {
		t.Errorf("large tensor should show statistics, not a table of values")
	}
}
