package plot

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Series is one line of a chart: the points (X[i], Y[i]). A nil X means the
// indices 0, 1, 2, ... Name is shown in the legend.
type Series struct {
	Name string
	X, Y []float64
}

// Plot is a line chart. Its zero value is an empty 640×400 chart; set the
// fields and call PNG, WritePNG or WriteSVG. Width and Height are in CSS
// pixels (the PNG is drawn at twice that resolution so that it stays sharp
// on high-density screens).
//
// In a gophernotes cell, a *Plot displays as one PNG image: gophernotes
// sends every representation a value has a method for (PNG() []byte,
// SVG() string, HTML() string, ...), so the SVG is written by WriteSVG
// rather than offered as an SVG method. PNG is the one kept because every
// notebook viewer shows it, while Jupyter hides the SVG output of a
// notebook that the reader has not run or trusted.
type Plot struct {
	Title  string
	XLabel string
	YLabel string
	Series []Series
	Width  int // 640 when zero
	Height int // 400 when zero
}

// LossCurve returns a chart of loss against iteration, with the given title
// and one line per series.
func LossCurve(title string, series ...Series) *Plot {
	return &Plot{Title: title, XLabel: "iteration", YLabel: "loss", Series: series}
}

// LossCurveSVG returns a loss-curve chart (see LossCurve) as a standalone
// SVG document. It panics if a series has a non-nil X whose length differs
// from that of Y.
func LossCurveSVG(title string, series ...Series) string {
	return LossCurve(title, series...).svg()
}

// LossCurvePNG returns a loss-curve chart (see LossCurve) encoded as PNG.
// It panics if a series has a non-nil X whose length differs from that of
// Y; the error reports a failure to encode the image.
func LossCurvePNG(title string, series ...Series) ([]byte, error) {
	var buf bytes.Buffer
	if err := LossCurve(title, series...).WritePNG(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteSVG writes the chart into w as a standalone SVG document and returns
// w's error. It panics if a series has a non-nil X whose length differs
// from that of Y.
func (p *Plot) WriteSVG(w io.Writer) error {
	_, err := io.WriteString(w, p.svg())
	return err
}

// svg returns the chart as a standalone SVG document.
func (p *Plot) svg() string {
	c := newSVGCanvas(p.size())
	p.draw(c)
	return c.String()
}

// PNG returns the chart encoded as a PNG image; it is what a gophernotes
// cell whose value is the chart displays. It panics if the chart is invalid
// (see WriteSVG) or cannot be encoded; WritePNG returns the encoding error
// instead.
func (p *Plot) PNG() []byte {
	var buf bytes.Buffer
	if err := p.WritePNG(&buf); err != nil {
		panic(err.Error())
	}
	return buf.Bytes()
}

// WritePNG encodes the chart as a PNG image into w. It panics if the chart
// is invalid (see WriteSVG).
func (p *Plot) WritePNG(w io.Writer) error {
	c := newRasterCanvas(p.size())
	p.draw(c)
	if err := c.encode(w); err != nil {
		return fmt.Errorf("plot: encoding PNG: %w", err)
	}
	return nil
}

func (p *Plot) size() (w, h float64) {
	w, h = 640, 400
	if p.Width > 0 {
		w = float64(p.Width)
	}
	if p.Height > 0 {
		h = float64(p.Height)
	}
	return w, h
}

// palette is matplotlib's "tab10" colour cycle.
var palette = []rgb{
	{0x1f, 0x77, 0xb4}, {0xff, 0x7f, 0x0e}, {0x2c, 0xa0, 0x2c}, {0xd6, 0x27, 0x28},
	{0x94, 0x67, 0xbd}, {0x8c, 0x56, 0x4b}, {0xe3, 0x77, 0xc2}, {0x7f, 0x7f, 0x7f},
	{0xbc, 0xbd, 0x22}, {0x17, 0xbe, 0xcf},
}

type rgb struct{ r, g, b uint8 }

func (c rgb) hex() string { return fmt.Sprintf("#%02x%02x%02x", c.r, c.g, c.b) }

var (
	black    = rgb{0x22, 0x22, 0x22}
	gray     = rgb{0x55, 0x55, 0x55}
	gridGray = rgb{0xe5, 0xe5, 0xe5}
	white    = rgb{0xff, 0xff, 0xff}
)

// Text sizes, in font pixels: the bitmap font's glyphs are 5×7 font pixels
// in a 6×9 cell; one font pixel is this many CSS pixels.
const (
	tickText  = 1.5
	labelText = 1.5
	titleText = 2
)

type anchor int

const (
	anchorStart anchor = iota
	anchorMiddle
	anchorEnd
)

// canvas is what the chart layout draws on; the SVG and PNG back ends
// implement it. Coordinates are CSS pixels from the top-left corner.
type canvas interface {
	// textWidth returns the width of s drawn at size.
	textWidth(s string, size float64) float64
	// text draws s with its baseline at y, anchored at x; vertical text
	// reads bottom to top and is anchored along the y axis.
	text(x, y float64, s string, size float64, a anchor, c rgb, vertical bool)
	// line draws a straight segment.
	line(x0, y0, x1, y1, width float64, c rgb)
	// polyline draws connected segments through pts.
	polyline(pts [][2]float64, width float64, c rgb)
	// rect fills a rectangle and outlines it when stroke is non-nil.
	rect(x, y, w, h float64, fill rgb, stroke *rgb)
	// dot fills a circle of radius r centred at (x, y), outlined in white
	// so that it stands out on its own line.
	dot(x, y, r float64, c rgb)
}

// Markers: a series whose points are at least markerSpacing CSS pixels
// apart on average gets a dot of markerRadius at each point, so that a
// sparse series (evaluations every few hundred iterations) shows where it
// was measured; a dense one is a plain line.
const (
	markerSpacing = 8.0
	markerRadius  = 3.5
)

// sparse reports whether the points pts (CSS pixels, left to right in
// data order) are far enough apart on average to be marked.
func sparse(pts [][2]float64) bool {
	if len(pts) < 2 {
		return false
	}
	lo, hi := pts[0][0], pts[0][0]
	for _, p := range pts {
		lo, hi = min(lo, p[0]), max(hi, p[0])
	}
	return (hi-lo)/float64(len(pts)-1) >= markerSpacing
}

// textHeight is the height of a capital letter at size.
func textHeight(size float64) float64 { return 7 * size }

func (p *Plot) check() {
	for i, s := range p.Series {
		if s.X != nil && len(s.X) != len(s.Y) {
			panic(fmt.Sprintf("plot: series %d (%q) has %d x values and %d y values", i, s.Name, len(s.X), len(s.Y)))
		}
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func (s Series) x(i int) float64 {
	if s.X == nil {
		return float64(i)
	}
	return s.X[i]
}

// dataRange returns the extent of the finite points, or false when there
// are none.
func (p *Plot) dataRange() (x0, x1, y0, y1 float64, ok bool) {
	x0, y0 = math.Inf(1), math.Inf(1)
	x1, y1 = math.Inf(-1), math.Inf(-1)
	for _, s := range p.Series {
		for i, y := range s.Y {
			x := s.x(i)
			if !finite(x) || !finite(y) {
				continue
			}
			ok = true
			x0, x1 = min(x0, x), max(x1, x)
			y0, y1 = min(y0, y), max(y1, y)
		}
	}
	return x0, x1, y0, y1, ok
}

// axis maps data values onto pixels and holds the tick values.
type axis struct {
	lo, hi   float64 // data range shown
	p0, p1   float64 // pixel positions of lo and hi
	ticks    []float64
	decimals int
}

func (a axis) pos(v float64) float64 {
	return a.p0 + (v-a.lo)/(a.hi-a.lo)*(a.p1-a.p0)
}

func (a axis) label(v float64) string {
	if v == 0 {
		return "0"
	}
	av := math.Abs(v)
	if av >= 1e6 || av < 1e-4 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', a.decimals, 64)
}

// niceAxis chooses a range covering [lo, hi] that starts and ends on ticks
// spaced 1, 2 or 5 times a power of ten, with about n intervals.
func niceAxis(lo, hi float64, n int) axis {
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		d := math.Abs(lo) * 0.1
		if d == 0 {
			d = 1
		}
		lo, hi = lo-d, hi+d
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	start := math.Floor(lo/step+1e-9) * step
	end := math.Ceil(hi/step-1e-9) * step
	a := axis{lo: start, hi: end}
	for i := 0; ; i++ {
		v := start + float64(i)*step
		if v > end+step*1e-6 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		a.ticks = append(a.ticks, v)
	}
	a.decimals = max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	if s := strconv.FormatFloat(step, 'f', -1, 64); strings.Contains(s, ".") {
		a.decimals = max(a.decimals, len(s)-strings.Index(s, ".")-1)
	}
	return a
}

// draw lays the chart out on c.
func (p *Plot) draw(c canvas) {
	p.check()
	w, h := p.size()
	c.rect(0, 0, w, h, white, nil)

	x0, x1, y0, y1, ok := p.dataRange()
	if !ok {
		x0, x1, y0, y1 = 0, 1, 0, 1
	}
	xa := niceAxis(x0, x1, max(2, int(w/110)))
	ya := niceAxis(y0, y1, max(2, int(h/70)))

	// Margins: room for the title above, tick labels and axis labels
	// around the plotting area.
	top := 16.0
	if p.Title != "" {
		top += textHeight(titleText) + 12
	}
	yTickW := 0.0
	for _, v := range ya.ticks {
		yTickW = max(yTickW, c.textWidth(ya.label(v), tickText))
	}
	left := 12 + yTickW + 8
	if p.YLabel != "" {
		left += textHeight(labelText) + 12
	}
	bottom := 12 + textHeight(tickText) + 8
	if p.XLabel != "" {
		bottom += textHeight(labelText) + 12
	}
	right := 24.0
	if n := len(xa.ticks); n > 0 {
		right = max(right, c.textWidth(xa.label(xa.ticks[n-1]), tickText)/2+8)
	}
	xa.p0, xa.p1 = left, w-right
	ya.p0, ya.p1 = h-bottom, top

	// Title.
	if p.Title != "" {
		c.text(w/2, 12+textHeight(titleText), p.Title, titleText, anchorMiddle, black, false)
	}

	// Grid lines and ticks.
	for _, v := range xa.ticks {
		x := xa.pos(v)
		c.line(x, ya.p1, x, ya.p0, 1, gridGray)
		c.line(x, ya.p0, x, ya.p0+5, 1, gray)
		c.text(x, ya.p0+8+textHeight(tickText), xa.label(v), tickText, anchorMiddle, gray, false)
	}
	for _, v := range ya.ticks {
		y := ya.pos(v)
		c.line(xa.p0, y, xa.p1, y, 1, gridGray)
		c.line(xa.p0-5, y, xa.p0, y, 1, gray)
		c.text(xa.p0-8, y+textHeight(tickText)/2, ya.label(v), tickText, anchorEnd, gray, false)
	}
	// Axes.
	c.line(xa.p0, ya.p0, xa.p1, ya.p0, 1, gray)
	c.line(xa.p0, ya.p0, xa.p0, ya.p1, 1, gray)
	if p.XLabel != "" {
		c.text((xa.p0+xa.p1)/2, h-12, p.XLabel, labelText, anchorMiddle, black, false)
	}
	if p.YLabel != "" {
		c.text(12+textHeight(labelText), (ya.p0+ya.p1)/2, p.YLabel, labelText, anchorMiddle, black, true)
	}

	// Lines, broken at non-finite points. A lone point is drawn as a dot;
	// the points of a sparse series get markers on top of the line.
	marked := make([]bool, len(p.Series))
	for i, s := range p.Series {
		col := palette[i%len(palette)]
		var run, all [][2]float64
		flush := func() {
			switch len(run) {
			case 0:
			case 1:
				c.line(run[0][0], run[0][1], run[0][0], run[0][1], 4, col)
			default:
				c.polyline(run, 2, col)
			}
			run = nil
		}
		for j, y := range s.Y {
			x := s.x(j)
			if !finite(x) || !finite(y) {
				flush()
				continue
			}
			run = append(run, [2]float64{xa.pos(x), ya.pos(y)})
			all = append(all, run[len(run)-1])
		}
		flush()
		if marked[i] = sparse(all); marked[i] {
			for _, pt := range all {
				c.dot(pt[0], pt[1], markerRadius, col)
			}
		}
	}

	// Legend in the top-right corner of the plotting area.
	var named []int
	for i, s := range p.Series {
		if s.Name != "" {
			named = append(named, i)
		}
	}
	if len(named) == 0 {
		return
	}
	const swatch, pad = 22.0, 8.0
	rowH := textHeight(tickText) + 8
	textW := 0.0
	for _, i := range named {
		textW = max(textW, c.textWidth(p.Series[i].Name, tickText))
	}
	bw := pad + swatch + 6 + textW + pad
	bh := pad + float64(len(named))*rowH - 8 + pad
	bx, by := xa.p1-10-bw, ya.p1+10
	border := rgb{0xcc, 0xcc, 0xcc}
	c.rect(bx, by, bw, bh, white, &border)
	for k, i := range named {
		col := palette[i%len(palette)]
		yMid := by + pad + float64(k)*rowH + textHeight(tickText)/2
		c.line(bx+pad, yMid, bx+pad+swatch, yMid, 2, col)
		if marked[i] {
			c.dot(bx+pad+swatch/2, yMid, markerRadius, col)
		}
		c.text(bx+pad+swatch+6, yMid+textHeight(tickText)/2, p.Series[i].Name, tickText, anchorStart, black, false)
	}
}
