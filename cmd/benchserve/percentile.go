package main

import (
	"math"
	"sort"
)

// percentile returns the p-th percentile (0 to 100) of xs by linear
// interpolation between the closest ranks (NumPy's default method:
// rank p/100·(n-1)), or NaN for no values. xs is not changed.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	return s[lo] + (s[hi]-s[lo])*(rank-float64(lo))
}

// maxOf returns the largest of xs, or NaN for none.
func maxOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	m := xs[0]
	for _, x := range xs[1:] {
		m = math.Max(m, x)
	}
	return m
}
