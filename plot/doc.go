// Package plot draws line charts, such as training loss curves, as SVG text
// or PNG images using only the Go standard library.
//
// It is the plotting code shared by the train command (which writes a loss
// curve into its output directory) and notebooks: a *Plot has a PNG method,
// so a gophernotes cell whose value is a *Plot displays the chart as one
// image; WriteSVG writes the same chart as SVG.
//
//	train := plot.Series{Name: "train", X: iters, Y: trainLoss}
//	val := plot.Series{Name: "val", X: evalIters, Y: valLoss}
//	svg := plot.LossCurveSVG("tiny GPT", train, val) // an <svg> document
//	png, err := plot.LossCurvePNG("tiny GPT", train, val)
//
// A chart has a title, axes with "nice" tick values (multiples of 1, 2 or 5
// times a power of ten) and labels, one polyline per series in a fixed
// colour cycle, and a legend when there is more than one named series.
// A sparse series, whose points lie 8 or more pixels apart on average (such
// as validation losses measured every few hundred iterations), also gets a
// round marker at each point. Non-finite points (NaN, ±Inf) are skipped and
// break the line.
//
// The package is separate from the library packages (tensor, autograd, nn,
// optim) so that a program that never plots does not link it.
package plot
