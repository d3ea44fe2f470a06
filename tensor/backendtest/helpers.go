package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/wickml/wick/tensor"
)

func randn(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}

func randIn(r *rand.Rand, n int, lo, hi float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(lo + (hi-lo)*r.Float64())
	}
	return out
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func whole(n int) tensor.Layout { return tensor.Layout{Shape: []int{n}, Strides: []int{1}} }

func contiguous(shape []int) tensor.Layout {
	return tensor.Layout{Shape: shape, Strides: tensor.ContiguousStrides(shape)}
}

// poisoned returns an n-element storage of b filled with NaN (Float32) or
// with -7777777 (Int64), so that an element a kernel does not write shows.
func poisoned(b tensor.Backend, dt tensor.DType, n int) tensor.Storage {
	s := b.Alloc(dt, n)
	if n > 0 {
		v := math.NaN()
		if dt == tensor.Int64 {
			v = -7777777
		}
		b.Fill(s, whole(n), v)
	}
	return s
}

// read returns every element of a Float32 storage.
func read(b tensor.Backend, s tensor.Storage) []float32 { return b.Float32s(s, whole(s.Len())) }

// readInts returns every element of an Int64 storage.
func readInts(b tensor.Backend, s tensor.Storage) []int64 { return b.Int64s(s, whole(s.Len())) }

// view is a strided view of the given shape into a storage of n elements.
type view struct {
	l tensor.Layout
	n int // storage elements
}

func (v view) String() string {
	return fmt.Sprintf("shape %v strides %v offset %d", v.l.Shape, v.l.Strides, v.l.Offset)
}

// randomShape returns 1 to maxDims dims of sizes 1..maxSize.
func randomShape(r *rand.Rand, maxDims, maxSize int) []int {
	s := make([]int, 1+r.IntN(maxDims))
	for i := range s {
		s[i] = 1 + r.IntN(maxSize)
	}
	return s
}

// kinds of views the checks build
const (
	contig    = iota // row-major from offset 0
	strided          // permuted dims, gaps, an offset
	broadcast        // strided, with some dims of stride 0
)

// viewKinds are the three layouts every strided kernel is checked with.
var viewKinds = []int{contig, strided, broadcast}

var kindNames = []string{"contiguous", "strided", "broadcast"}

// makeView lays out shape in a storage: contiguous, or with the dims in a
// random memory order, each with a random step and padding, at a random
// offset (and with stride 0 on some dims for broadcast).
func makeView(r *rand.Rand, shape []int, kind int) view {
	nd := len(shape)
	if kind == contig {
		return view{contiguous(append([]int{}, shape...)), max(numel(shape), 1)}
	}
	order := r.Perm(nd)
	strides := make([]int, nd)
	size := 1
	for i := nd - 1; i >= 0; i-- {
		d := order[i]
		step := 1 + r.IntN(2)
		strides[d] = size * step
		size *= (shape[d]-1)*step + 1 + r.IntN(2)
	}
	if kind == broadcast {
		for d := range nd {
			if r.IntN(2) == 0 {
				strides[d] = 0
			}
		}
	}
	off := r.IntN(3)
	return view{tensor.Layout{Shape: append([]int{}, shape...), Strides: strides, Offset: off}, off + size}
}

// gatherView returns the elements of view l of data in row-major order.
func gatherView[T any](data []T, l tensor.Layout) []T {
	offs := l.Offsets()
	out := make([]T, len(offs))
	for i, o := range offs {
		out[i] = data[o]
	}
	return out
}

func to64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// round32 rounds each element to float32 and back: the values a float32
// kernel given the reference's results as input would see.
func round32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}
