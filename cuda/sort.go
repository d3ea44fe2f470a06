//go:build cuda

package cuda

import "github.com/wickml/wick/tensor"

// Sort sorts each contiguous row of src into vals with the positions in
// idx (csrc/sort.cu: stable, NaN above every number).
func (b *backend) Sort(vals, idx, src tensor.Storage, rows, cols int, descending bool) {
	const op = "Sort"
	defer b.d.enter()()
	n := rows * cols
	v, ix, s := b.rows(op, vals, n), b.rows(op, idx, n), b.rows(op, src, n)
	defer keepAlive(v, ix, s)
	a := &args{}
	a.ptr(v.ptr(op, 0)).ptr(ix.ptr(op, 0)).ptr(s.ptr(op, 0)).i64(rows).i64(cols).i32(boolInt(descending))
	b.d.launch1D(op, b.d.k.sort, n, a)
}
