package plot

import (
	"image"
	"image/png"
	"io"
	"math"
)

// pngScale is the number of image pixels per CSS pixel.
const pngScale = 2

// rasterCanvas draws anti-aliased shapes and bitmap text into an RGBA
// image.
type rasterCanvas struct {
	img   *image.RGBA
	mask  []float32       // coverage scratch for one shape, image-sized
	dirty image.Rectangle // the part of mask that may be non-zero
}

func newRasterCanvas(w, h float64) *rasterCanvas {
	iw, ih := int(math.Ceil(w*pngScale)), int(math.Ceil(h*pngScale))
	return &rasterCanvas{
		img:  image.NewRGBA(image.Rect(0, 0, iw, ih)),
		mask: make([]float32, iw*ih),
	}
}

func (c *rasterCanvas) encode(w io.Writer) error {
	enc := png.Encoder{CompressionLevel: png.DefaultCompression}
	return enc.Encode(w, c.img)
}

// blend mixes colour col into pixel (x, y) with coverage a in [0, 1].
func (c *rasterCanvas) blend(x, y int, col rgb, a float32) {
	if a <= 0 || !(image.Point{x, y}.In(c.img.Rect)) {
		return
	}
	if a > 1 {
		a = 1
	}
	i := c.img.PixOffset(x, y)
	p := c.img.Pix[i : i+4 : i+4]
	mix := func(dst, src uint8) uint8 {
		return uint8(float32(dst)*(1-a) + float32(src)*a + 0.5)
	}
	p[0], p[1], p[2], p[3] = mix(p[0], col.r), mix(p[1], col.g), mix(p[2], col.b), 255
}

// touch marks pixels [x0,x1)×[y0,y1) of the mask as possibly covered.
func (c *rasterCanvas) touch(x0, y0, x1, y1 int) {
	c.dirty = c.dirty.Union(image.Rect(x0, y0, x1, y1).Intersect(c.img.Rect))
}

// fillMask adds the coverage of the device-space rectangle [x0,x1)×[y0,y1)
// into the mask.
func (c *rasterCanvas) fillMask(x0, y0, x1, y1 float64) {
	b := c.img.Rect
	c.touch(int(math.Floor(x0)), int(math.Floor(y0)), int(math.Ceil(x1)), int(math.Ceil(y1)))
	for y := max(int(math.Floor(y0)), 0); y < min(int(math.Ceil(y1)), b.Max.Y); y++ {
		cy := min(y1, float64(y+1)) - max(y0, float64(y))
		if cy <= 0 {
			continue
		}
		for x := max(int(math.Floor(x0)), 0); x < min(int(math.Ceil(x1)), b.Max.X); x++ {
			cx := min(x1, float64(x+1)) - max(x0, float64(x))
			if cx <= 0 {
				continue
			}
			k := y*b.Max.X + x
			c.mask[k] = min(1, c.mask[k]+float32(cx*cy))
		}
	}
}

// strokeMask adds a segment of the given width (device pixels) with round
// caps to the mask: each pixel's coverage comes from the distance between
// its centre and the segment.
func (c *rasterCanvas) strokeMask(x0, y0, x1, y1, width float64) {
	r := width / 2
	b := c.img.Rect
	minX := max(int(math.Floor(min(x0, x1)-r-1)), 0)
	maxX := min(int(math.Ceil(max(x0, x1)+r+1)), b.Max.X-1)
	minY := max(int(math.Floor(min(y0, y1)-r-1)), 0)
	maxY := min(int(math.Ceil(max(y0, y1)+r+1)), b.Max.Y-1)
	c.touch(minX, minY, maxX+1, maxY+1)
	dx, dy := x1-x0, y1-y0
	l2 := dx*dx + dy*dy
	for y := minY; y <= maxY; y++ {
		py := float64(y) + 0.5
		for x := minX; x <= maxX; x++ {
			px := float64(x) + 0.5
			t := 0.0
			if l2 > 0 {
				t = math.Max(0, math.Min(1, ((px-x0)*dx+(py-y0)*dy)/l2))
			}
			ex, ey := px-(x0+t*dx), py-(y0+t*dy)
			d := math.Sqrt(ex*ex + ey*ey)
			cov := float32(math.Max(0, math.Min(1, r+0.5-d)))
			k := y*b.Max.X + x
			c.mask[k] = max(c.mask[k], cov)
		}
	}
}

// flush composites the mask in colour col and clears it.
func (c *rasterCanvas) flush(col rgb) {
	w := c.img.Rect.Max.X
	for y := c.dirty.Min.Y; y < c.dirty.Max.Y; y++ {
		for x := c.dirty.Min.X; x < c.dirty.Max.X; x++ {
			if a := c.mask[y*w+x]; a > 0 {
				c.blend(x, y, col, a)
				c.mask[y*w+x] = 0
			}
		}
	}
	c.dirty = image.Rectangle{}
}

func (c *rasterCanvas) textWidth(s string, size float64) float64 {
	n := len([]rune(s))
	if n == 0 {
		return 0
	}
	return (float64(n*glyphCellW) - 1) * size
}

func (c *rasterCanvas) text(x, y float64, s string, size float64, a anchor, col rgb, vertical bool) {
	w := c.textWidth(s, size)
	start := 0.0
	switch a {
	case anchorMiddle:
		start = -w / 2
	case anchorEnd:
		start = -w
	}
	px := size * pngScale // device pixels per font pixel
	// Snap to whole device pixels so that glyph pixels stay crisp.
	ox, oy := math.Round(x*pngScale), math.Round(y*pngScale)
	start = math.Round(start * pngScale)
	for i, r := range []rune(s) {
		g := glyph(r)
		for row := range glyphH {
			for colIdx := range glyphW {
				if g[row]&(1<<(glyphW-1-colIdx)) == 0 {
					continue
				}
				// Position along the text and across it, relative to
				// the anchor on the baseline.
				u := start + float64(i*glyphCellW+colIdx)*px
				v := float64(row-7) * px
				if vertical {
					// rotated 90° anticlockwise: text reads upwards
					c.fillMask(ox+v, oy-u-px, ox+v+px, oy-u)
				} else {
					c.fillMask(ox+u, oy+v, ox+u+px, oy+v+px)
				}
			}
		}
	}
	c.flush(col)
}

func (c *rasterCanvas) line(x0, y0, x1, y1, width float64, col rgb) {
	if width <= 1 && (x0 == x1 || y0 == y1) {
		// Hairlines on the pixel grid: one crisp device-pixel-aligned rectangle.
		s := float64(pngScale)
		hw := width * s / 2
		ax, ay, bx, by := math.Round(x0*s), math.Round(y0*s), math.Round(x1*s), math.Round(y1*s)
		c.fillMask(min(ax, bx)-hw, min(ay, by)-hw, max(ax, bx)+hw, max(ay, by)+hw)
		c.flush(col)
		return
	}
	c.strokeMask(x0*pngScale, y0*pngScale, x1*pngScale, y1*pngScale, width*pngScale)
	c.flush(col)
}

func (c *rasterCanvas) polyline(pts [][2]float64, width float64, col rgb) {
	for i := 1; i < len(pts); i++ {
		c.strokeMask(pts[i-1][0]*pngScale, pts[i-1][1]*pngScale, pts[i][0]*pngScale, pts[i][1]*pngScale, width*pngScale)
	}
	c.flush(col)
}

func (c *rasterCanvas) dot(x, y, r float64, col rgb) {
	s := float64(pngScale)
	c.strokeMask(x*s, y*s, x*s, y*s, 2*(r+1)*s) // the white outline
	c.flush(white)
	c.strokeMask(x*s, y*s, x*s, y*s, 2*r*s)
	c.flush(col)
}

func (c *rasterCanvas) rect(x, y, w, h float64, fill rgb, stroke *rgb) {
	s := float64(pngScale)
	c.fillMask(x*s, y*s, (x+w)*s, (y+h)*s)
	c.flush(fill)
	if stroke != nil {
		c.line(x, y, x+w, y, 1, *stroke)
		c.line(x+w, y, x+w, y+h, 1, *stroke)
		c.line(x+w, y+h, x, y+h, 1, *stroke)
		c.line(x, y+h, x, y, 1, *stroke)
	}
}
