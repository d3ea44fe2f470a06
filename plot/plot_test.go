package plot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/png"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	goldenfile "github.com/wickml/wick/internal/golden"

	"github.com/wickml/wick/internal/approx"
)

// golden compares got with testdata/name (-update-golden rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

func sampleSeries() []Series {
	return []Series{
		{Name: "train", X: []float64{0, 10, 20, 30, 40}, Y: []float64{4.2, 3.1, 2.5, 2.2, 2.0}},
		{Name: "val", X: []float64{0, 20, 40}, Y: []float64{4.3, 2.7, 2.3}},
	}
}

// svgOf returns p's SVG document.
func svgOf(t *testing.T, p *Plot) string {
	t.Helper()
	var b strings.Builder
	if err := p.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPlotDisplaysOneImage checks that a *Plot offers gophernotes exactly
// one representation, its PNG: gophernotes sends one output per display
// method a value has, so a second one would store the chart twice.
func TestPlotDisplaysOneImage(t *testing.T) {
	var v any = LossCurve("loss", sampleSeries()...)
	if _, ok := v.(interface{ PNG() []byte }); !ok {
		t.Error("*Plot has no PNG() []byte method")
	}
	others := map[string]bool{
		"SVG() string":                  implements[interface{ SVG() string }](v),
		"HTML() string":                 implements[interface{ HTML() string }](v),
		"Markdown() string":             implements[interface{ Markdown() string }](v),
		"Latex() string":                implements[interface{ Latex() string }](v),
		"JavaScript() string":           implements[interface{ JavaScript() string }](v),
		"JPEG() []byte":                 implements[interface{ JPEG() []byte }](v),
		"PDF() []byte":                  implements[interface{ PDF() []byte }](v),
		"JSON() map[string]any":         implements[interface{ JSON() map[string]any }](v),
		"SimpleRender() map[string]any": implements[interface{ SimpleRender() map[string]any }](v),
	}
	for m, has := range others {
		if has {
			t.Errorf("*Plot has a %s method, which gophernotes would display too", m)
		}
	}
}

func implements[I any](v any) bool {
	_, ok := v.(I)
	return ok
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

func TestWriteErrors(t *testing.T) {
	p := LossCurve("loss", sampleSeries()...)
	if err := p.WriteSVG(failWriter{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("WriteSVG into a failing writer: %v, want its error", err)
	}
	if err := p.WritePNG(failWriter{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("WritePNG into a failing writer: %v, want its error", err)
	}
}

func TestLossCurveSVGGolden(t *testing.T) {
	golden(t, "loss.svg.golden", LossCurveSVG("loss <test>", sampleSeries()...))
}

func TestSVGIsWellFormedXML(t *testing.T) {
	s := LossCurveSVG("a & b", sampleSeries()...)
	d := xml.NewDecoder(strings.NewReader(s))
	elems := map[string]int{}
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("invalid XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			elems[se.Name.Local]++
		}
	}
	if elems["svg"] != 1 || elems["polyline"] != 2 {
		t.Errorf("elements = %v, want one svg and two polylines", elems)
	}
	// title, 2 legend names, axis labels and tick labels
	if elems["text"] < 5 {
		t.Errorf("only %d text elements", elems["text"])
	}
	if !strings.Contains(s, "a &amp; b") {
		t.Error("title not escaped")
	}
}

func TestNiceAxis(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		ticks  []float64
		label  string // label of the second tick
	}{
		{0, 2000, 5, []float64{0, 500, 1000, 1500, 2000}, "500"},
		{1.46, 4.31, 5, []float64{1, 2, 3, 4, 5}, "2"},
		{2.05, 2.31, 4, []float64{2, 2.1, 2.2, 2.3, 2.4}, "2.1"},
		{-1, 1, 4, []float64{-1, -0.5, 0, 0.5, 1}, "-0.5"},
		{3, 3, 4, []float64{2.6, 2.8, 3, 3.2, 3.4}, "2.8"},
		{0, 0, 4, []float64{-1, -0.5, 0, 0.5, 1}, "-0.5"},
	} {
		a := niceAxis(c.lo, c.hi, c.n)
		if len(a.ticks) != len(c.ticks) {
			t.Errorf("niceAxis(%v, %v, %d) ticks = %v, want %v", c.lo, c.hi, c.n, a.ticks, c.ticks)
			continue
		}
		for i := range a.ticks {
			if !approx.Scalar(a.ticks[i], c.ticks[i], 0, 1e-9) {
				t.Errorf("niceAxis(%v, %v, %d) ticks = %v, want %v", c.lo, c.hi, c.n, a.ticks, c.ticks)
				break
			}
		}
		if a.lo > c.lo || a.hi < c.hi {
			t.Errorf("niceAxis(%v, %v) range [%v, %v] does not cover the data", c.lo, c.hi, a.lo, a.hi)
		}
		if got := a.label(a.ticks[1]); got != c.label {
			t.Errorf("niceAxis(%v, %v) label = %q, want %q", c.lo, c.hi, got, c.label)
		}
	}
}

func TestPNG(t *testing.T) {
	b, err := LossCurvePNG("loss", sampleSeries()...)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got.X != 1280 || got.Y != 800 {
		t.Fatalf("size = %v, want 1280x800", got)
	}
	// Count pixels in each series colour: both lines are drawn, and
	// most of the image is white background.
	counts := map[rgb]int{}
	for y := range 800 {
		for x := range 1280 {
			r, g, bl, _ := img.At(x, y).RGBA()
			counts[rgb{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}]++
		}
	}
	if counts[white] < 1280*800/2 {
		t.Errorf("only %d white pixels", counts[white])
	}
	for i := range 2 {
		if counts[palette[i]] < 200 {
			t.Errorf("series %d colour %v has only %d pixels", i, palette[i], counts[palette[i]])
		}
	}
	if counts[palette[2]] != 0 {
		t.Errorf("a third series colour appears in a two-series chart")
	}
	if counts[black] < 100 {
		t.Errorf("title and label text missing: %d black pixels", counts[black])
	}
}

func TestPlotMethodsAgree(t *testing.T) {
	p := LossCurve("loss", sampleSeries()...)
	if svgOf(t, p) != LossCurveSVG("loss", sampleSeries()...) {
		t.Error("Plot.WriteSVG differs from LossCurveSVG")
	}
	b, err := LossCurvePNG("loss", sampleSeries()...)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.PNG(), b) {
		t.Error("Plot.PNG differs from LossCurvePNG")
	}
	small := &Plot{Width: 300, Height: 200, Series: []Series{{Y: []float64{1, 2}}}}
	img, err := png.Decode(bytes.NewReader(small.PNG()))
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got.X != 600 || got.Y != 400 {
		t.Errorf("size = %v, want 600x400", got)
	}
	if !strings.Contains(svgOf(t, small), `width="300" height="200"`) {
		t.Error("SVG ignores Width/Height")
	}
}

func TestNonFiniteBreaksLine(t *testing.T) {
	s := Series{Y: []float64{3, 2, math.NaN(), 1.5, 1.2, math.Inf(1), 1}}
	svg := LossCurveSVG("", s)
	// [3 2] and [1.5 1.2] are lines; the lone [1] is a dot.
	if n := strings.Count(svg, "<polyline"); n != 2 {
		t.Errorf("%d polylines, want 2", n)
	}
	if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		t.Error("non-finite coordinates in SVG")
	}
	// No names: no legend box.
	if strings.Contains(svg, `stroke="#cccccc"`) {
		t.Error("legend drawn for unnamed series")
	}
}

func TestEmptyChart(t *testing.T) {
	for _, p := range []*Plot{{}, LossCurve("nothing yet"), LossCurve("empty", Series{Name: "train"})} {
		if svg := svgOf(t, p); !strings.HasPrefix(svg, "<svg") || strings.Contains(svg, "NaN") {
			t.Errorf("bad empty SVG: %.80s", svg)
		}
		if _, err := png.Decode(bytes.NewReader(p.PNG())); err != nil {
			t.Error(err)
		}
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), `series 0 ("bad") has 2 x values and 3 y values`) {
			t.Errorf("recover() = %v", r)
		}
	}()
	LossCurveSVG("x", Series{Name: "bad", X: []float64{1, 2}, Y: []float64{1, 2, 3}})
}

func TestGlyphs(t *testing.T) {
	for r := rune(32); r < 127; r++ {
		if _, ok := glyphs[r]; !ok {
			t.Errorf("no glyph for %q", r)
		}
	}
	if !reflect.DeepEqual(glyph('é'), glyph('?')) {
		t.Error("characters outside the font should draw as '?'")
	}
	if glyph('g')[8] == 0 || glyph('a')[8] != 0 {
		t.Error("descender rows wrong")
	}
}

func BenchmarkLossCurvePNG(b *testing.B) {
	y := make([]float64, 5000)
	for i := range y {
		y[i] = 4*math.Exp(-float64(i)/800) + 1.5 + 0.1*math.Sin(float64(i))
	}
	for b.Loop() {
		if _, err := LossCurvePNG("bench", Series{Name: "train", Y: y}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSparseSeriesMarkers checks that the points of a sparse series (such
// as evaluations every few hundred iterations) get markers, in the chart
// and in the legend, while a dense series stays a plain line.
func TestSparseSeriesMarkers(t *testing.T) {
	dense := Series{Name: "train", X: make([]float64, 301), Y: make([]float64, 301)}
	for i := range dense.X {
		dense.X[i] = float64(i * 5)
		dense.Y[i] = 4 - float64(i)/150
	}
	val := Series{Name: "val", X: []float64{0, 250, 500, 750, 1000, 1250, 1500}, Y: []float64{4.2, 3, 2.5, 2.2, 2.1, 2.05, math.NaN()}}
	svg := LossCurveSVG("loss", dense, val)
	// six finite validation points and the legend's swatch
	if n := strings.Count(svg, "<circle"); n != 7 {
		t.Errorf("%d markers, want 7 (6 points and the legend)", n)
	}
	if n := strings.Count(svg, `<circle cx="`); n != strings.Count(svg, `fill="#ff7f0e" stroke="#ffffff"`) {
		t.Errorf("markers not all in the val series' colour:\n%s", svg)
	}
	if n := strings.Count(LossCurveSVG("loss", dense), "<circle"); n != 0 {
		t.Errorf("a dense series has %d markers, want none", n)
	}

	// In the PNG the marker is a disc of the series' colour wider than its
	// 2-pixel line: on a horizontal line, 2.5 pixels above a point's
	// centre is the colour only where there is a marker.
	flat := Series{X: []float64{0, 500, 1000}, Y: []float64{2, 2, 2}}
	var cx, cy float64
	if _, err := fmt.Sscanf(strings.SplitN(LossCurveSVG("", flat), "<circle ", 2)[1], `cx="%g" cy="%g"`, &cx, &cy); err != nil {
		t.Fatalf("no marker in the flat series: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(LossCurve("", flat).PNG()))
	if err != nil {
		t.Fatal(err)
	}
	r, g, b, _ := img.At(int(2*cx), int(2*(cy-2.5))).RGBA()
	if got := (rgb{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}); got != palette[0] {
		t.Errorf("PNG pixel 2.5 px above the first marker's centre is %v, want the series' colour %v", got, palette[0])
	}
	two := LossCurve("loss", Series{X: val.X[:2], Y: val.Y[:2]})
	two.Width = 2000 // 2 points far apart: sparse
	if n := strings.Count(svgOf(t, two), "<circle"); n != 2 {
		t.Errorf("%d markers on two points, want 2", n)
	}
}
