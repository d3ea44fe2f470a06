//go:build amd64 && !purego

package blas

// dot4x3AVX2 writes to out[4i:4i+4] the dot products of the 8·k8 floats
// of row i of the three rows at x (ldx floats apart) with the four rows at
// w (ldw floats apart), each with dot4AVX2's bits (k8 ≥ 1).
//
//go:noescape
func dot4x3AVX2(k8 int, x *float32, ldx int, w *float32, ldw int, out *[12]float32)

// dot4x1AVX512 … dot4x6AVX512 write to out[i·ldo+4q : i·ldo+4q+4] the
// dot products of the 16·k16 floats of row i of the R rows at x (ldx
// floats apart) with the four rows of w at w+4q·ldw (ldw floats apart),
// for each q < quads, each row with the same bits whatever R and quads
// are (k16 ≥ 1, quads ≥ 1). rows512_amd64.s, written by gen_rows512.go.
//
//go:noescape
func dot4x1AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int)

//go:noescape
func dot4x2AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int)

//go:noescape
func dot4x3AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int)

//go:noescape
func dot4x4AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int)

//go:noescape
func dot4x5AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int)

//go:noescape
func dot4x6AVX512(k16 int, x *float32, ldx int, w *float32, ldw int, out *float32, ldo int, quads int)
