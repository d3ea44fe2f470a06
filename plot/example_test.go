package plot_test

import (
	"bytes"
	"fmt"
	"image/png"
	"strings"

	"github.com/wickml/wick/plot"
)

func ExampleLossCurveSVG() {
	train := plot.Series{Name: "train", X: []float64{0, 100, 200, 300}, Y: []float64{4.2, 2.9, 2.4, 2.1}}
	val := plot.Series{Name: "val", X: []float64{0, 150, 300}, Y: []float64{4.3, 2.7, 2.3}}
	svg := plot.LossCurveSVG("tiny GPT", train, val)
	fmt.Println(strings.HasPrefix(svg, "<svg"), strings.Count(svg, "<polyline"))
	// Output: true 2
}

func ExampleLossCurvePNG() {
	train := plot.Series{Name: "train", Y: []float64{4.2, 2.9, 2.4, 2.1}}
	b, err := plot.LossCurvePNG("tiny GPT", train)
	if err != nil {
		fmt.Println(err)
		return
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(img.Bounds().Size())
	// Output: (1280,800)
}

func ExamplePlot() {
	p := &plot.Plot{
		Title:  "learning rate",
		XLabel: "iteration",
		YLabel: "lr",
		Series: []plot.Series{{Y: []float64{0, 5e-4, 1e-3, 7e-4, 3e-4, 1e-4}}},
		Width:  480,
		Height: 300,
	}
	// In a notebook, a cell whose value is p shows the chart (its PNG).
	var svg strings.Builder
	if err := p.WriteSVG(&svg); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Contains(svg.String(), `width="480" height="300"`))
	// Output: true
}
