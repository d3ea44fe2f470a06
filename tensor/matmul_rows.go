package tensor

// rowMatMuler is the optional Backend method behind MatMulRowInvariant:
// matMulRows writes a @ b into the contiguous dst for a [m, k] and b
// [k, n] (strided views), each row of dst computed from the same row of a
// alone, in an order that does not depend on m.
type rowMatMuler interface {
	matMulRows(dst, a Storage, al Layout, b Storage, bl Layout)
}

// MatMulRowInvariant returns the product t·o of the matrices t [m, k] and
// o [k, n], as MatMul does, computed so that each row of the result
// depends only on the same row of t and on o: its bits do not change with
// m or with t's other rows. This is batch invariance, what a server needs
// to give a request the same numbers whether its rows are multiplied
// alone or stacked with other requests' rows (package serve). MatMul does
// not promise it, since it picks its kernel and its blocking from the
// product's shape.
//
// On the CPU each element is a dot product of a row of t with a column of
// o, summed in SIMD lanes and then across them in an order fixed by k and
// the machine's kernels (on AVX2 the order of MatMul's one-row path, so
// that there a row of the result is MatMul's product of that row alone).
// It is fastest when o is the transpose of a contiguous matrix (a Linear
// layer's weight W [n, k] as W.T()): o is read from memory once per call
// however many rows t has, several rows of t meet each part of it in
// registers, and a single row runs as fast as MatMul's. Other backends
// (CUDA) compute MatMul, without the guarantee. The product is recorded for autograd as
// MatMul's is. MatMulRowInvariant panics if t or o is not a 2-D float32
// tensor or the inner dimensions differ.
func (t *Tensor) MatMulRowInvariant(o *Tensor) *Tensor {
	sameDevice("MatMulRowInvariant", t, o)
	mustFloat("MatMulRowInvariant", t, o)
	if t.Dim() != 2 || o.Dim() != 2 {
		panicf("MatMulRowInvariant", "expected matrices [m, k] and [k, n], got shapes %v and %v", t.layout.Shape, o.layout.Shape)
	}
	rm, ok := t.backend.(rowMatMuler)
	if !ok {
		return t.MatMul(o)
	}
	return matmulWith(t, o, t.layout.Shape, o.layout.Shape, rm.matMulRows)
}
