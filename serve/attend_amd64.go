//go:build amd64 && !purego

package serve

import (
	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/kernels"
)

// dotsAVX512 writes to out[p] the dot product of the 16·d16 floats at q
// with those at k + p·ldk, for p < s (s, d16 ≥ 1).
//
//go:noescape
func dotsAVX512(q *float32, k *float32, ldk int, s int, d16 int, out *float32)

// axpysAVX512 writes to out[0:16·d16] the sum over p < s of w[p] times
// the 16·d16 floats at v + p·ldv (s, d16 ≥ 1).
//
//go:noescape
func axpysAVX512(out *float32, w *float32, v *float32, ldv int, s int, d16 int)

// wideHeads reports whether decodeRow's AVX-512 loops take heads of d
// features: d a multiple of 16, on a processor (and kernels level) that
// runs AVX-512.
func wideHeads(d int) bool { return d%16 == 0 && kernels.Level() >= cpu.AVX512 }

// dots is dotsAVX512 over slices: sc[p] = q·keys[p·ld : p·ld+len(q)].
func dots(q, keys []float32, ld int, sc []float32) {
	s, d := len(sc), len(q)
	_ = keys[(s-1)*ld+d-1]
	dotsAVX512(&q[0], &keys[0], ld, s, d/16, &sc[0])
}

// axpys is axpysAVX512 over slices: out = Σ_p w[p]·vals[p·ld : p·ld+len(out)].
func axpys(out, w, vals []float32, ld int) {
	s, d := len(w), len(out)
	_ = vals[(s-1)*ld+d-1]
	axpysAVX512(&out[0], &w[0], &vals[0], ld, s, d/16)
}
