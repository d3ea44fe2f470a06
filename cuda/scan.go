//go:build cuda

package cuda

import "github.com/wickml/wick/tensor"

// Scan writes the running sum or product of each contiguous row of src
// (csrc/scan.cu: accumulated in double, one thread per row).
func (b *backend) Scan(op tensor.ScanOp, dst, src tensor.Storage, rows, cols int, reverse bool) {
	name := op.String()
	defer b.d.enter()()
	d, s := b.rows(name, dst, rows*cols), b.rows(name, src, rows*cols)
	defer keepAlive(d, s)
	if cols == 0 {
		return
	}
	a := &args{}
	a.ptr(d.ptr(name, 0)).ptr(s.ptr(name, 0)).i64(rows).i64(cols).i32(boolInt(op == tensor.ScanProd)).i32(boolInt(reverse))
	b.d.launch1D(name, b.d.k.scan, rows, a)
}
