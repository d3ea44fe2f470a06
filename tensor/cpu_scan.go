package tensor

// Scan writes each row's running sum or product, accumulated in float64
// and rounded at each element, as PyTorch's CPU kernels do.
func (cpuBackend) Scan(op ScanOp, dst, src Storage, rows, cols int, reverse bool) {
	d, s := fs(dst), fs(src)
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			x, y := s[r*cols:(r+1)*cols], d[r*cols:(r+1)*cols]
			acc := 0.0
			if op == ScanProd {
				acc = 1
			}
			for k := range cols {
				j := k
				if reverse {
					j = cols - 1 - k
				}
				if op == ScanProd {
					acc *= float64(x[j])
				} else {
					acc += float64(x[j])
				}
				y[j] = float32(acc)
			}
		}
	})
}
