package tensor

// triMask returns the 0/1 mask of the lower (or upper) triangle with
// diagonal offset k for the last two dims of shape.
func triMask(t *Tensor, k int, lower bool) *Tensor {
	nd := t.Dim()
	rows, cols := t.layout.Shape[nd-2], t.layout.Shape[nd-1]
	op := "Triu"
	if lower {
		op = "Tril"
	}
	checkAlloc(op, Float32, []int{rows, cols})
	data := make([]float32, rows*cols)
	for i := range rows {
		for j := range cols {
			if (lower && j-i <= k) || (!lower && j-i >= k) {
				data[i*cols+j] = 1
			}
		}
	}
	return newTensor(t.backend, t.backend.FromFloat32s(data), contiguousLayout([]int{rows, cols}))
}

// Tril keeps the elements on and below the k-th diagonal of the last two
// dims and zeroes the rest.
func (t *Tensor) Tril(k int) *Tensor {
	if t.Dim() < 2 {
		panicf("Tril", "input tensor must have at least 2 dimensions, got shape %v", t.layout.Shape)
	}
	return Where(triMask(t, k, true), t, scalarLike(t, 0))
}

// Triu keeps the elements on and above the k-th diagonal of the last two
// dims and zeroes the rest.
func (t *Tensor) Triu(k int) *Tensor {
	if t.Dim() < 2 {
		panicf("Triu", "input tensor must have at least 2 dimensions, got shape %v", t.layout.Shape)
	}
	return Where(triMask(t, k, false), t, scalarLike(t, 0))
}
