package plot

import (
	"fmt"
	"html"
	"strconv"
	"strings"
)

// svgCanvas writes SVG elements.
type svgCanvas struct {
	b strings.Builder
}

func newSVGCanvas(w, h float64) *svgCanvas {
	c := &svgCanvas{}
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n",
		num(w), num(h), num(w), num(h))
	return c
}

func (c *svgCanvas) String() string { return c.b.String() + "</svg>\n" }

// num formats a coordinate with at most two decimals.
func num(v float64) string {
	return strconv.FormatFloat(float64(int64(v*100+0.5*sign(v)))/100, 'f', -1, 64)
}

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}

// fontSize converts a size in font pixels into an SVG font size: a capital
// letter is about 0.72 em high.
func fontSize(size float64) float64 { return textHeight(size) / 0.72 }

func (c *svgCanvas) textWidth(s string, size float64) float64 {
	// An average sans-serif glyph is about 0.58 em wide; digits are 0.55 em.
	return float64(len([]rune(s))) * 0.58 * fontSize(size)
}

func (c *svgCanvas) text(x, y float64, s string, size float64, a anchor, col rgb, vertical bool) {
	anch := [...]string{"start", "middle", "end"}[a]
	if vertical {
		fmt.Fprintf(&c.b, `<text transform="translate(%s,%s) rotate(-90)" text-anchor="%s" font-size="%s" fill="%s">%s</text>`+"\n",
			num(x), num(y), anch, num(fontSize(size)), col.hex(), html.EscapeString(s))
		return
	}
	fmt.Fprintf(&c.b, `<text x="%s" y="%s" text-anchor="%s" font-size="%s" fill="%s">%s</text>`+"\n",
		num(x), num(y), anch, num(fontSize(size)), col.hex(), html.EscapeString(s))
}

func (c *svgCanvas) line(x0, y0, x1, y1, width float64, col rgb) {
	fmt.Fprintf(&c.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s" stroke-linecap="round"/>`+"\n",
		num(x0), num(y0), num(x1), num(y1), col.hex(), num(width))
}

func (c *svgCanvas) polyline(pts [][2]float64, width float64, col rgb) {
	c.b.WriteString(`<polyline fill="none" stroke="` + col.hex() + `" stroke-width="` + num(width) + `" stroke-linejoin="round" stroke-linecap="round" points="`)
	for i, p := range pts {
		if i > 0 {
			c.b.WriteByte(' ')
		}
		c.b.WriteString(num(p[0]) + "," + num(p[1]))
	}
	c.b.WriteString("\"/>\n")
}

func (c *svgCanvas) dot(x, y, r float64, col rgb) {
	fmt.Fprintf(&c.b, `<circle cx="%s" cy="%s" r="%s" fill="%s" stroke="#ffffff" stroke-width="1"/>`+"\n",
		num(x), num(y), num(r), col.hex())
}

func (c *svgCanvas) rect(x, y, w, h float64, fill rgb, stroke *rgb) {
	st := ""
	if stroke != nil {
		st = ` stroke="` + stroke.hex() + `" stroke-width="1"`
	}
	fmt.Fprintf(&c.b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"%s/>`+"\n",
		num(x), num(y), num(w), num(h), fill.hex(), st)
}
