package tensor

import "slices"

// Sort sorts each row with a stable sort of its positions: the order puts
// NaN above every number, and descending reverses the comparison only, so
// equal values keep their order either way (torch.sort(stable=True)).
func (cpuBackend) Sort(vals, idx, src Storage, rows, cols int, descending bool) {
	v, ix, s := fs(vals), is(idx), fs(src)
	parallelFor(rows, max(1, grain/max(cols, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			x := s[r*cols : (r+1)*cols]
			pos := ix[r*cols : (r+1)*cols]
			for i := range pos {
				pos[i] = int64(i)
			}
			slices.SortStableFunc(pos, func(a, b int64) int {
				if descending {
					return sortOrder(x[b], x[a])
				}
				return sortOrder(x[a], x[b])
			})
			out := v[r*cols : (r+1)*cols]
			for i, p := range pos {
				out[i] = x[p]
			}
		}
	})
}

// sortOrder compares a and b in Sort's order: numbers as usual (-0 equals
// +0), NaN above all of them and equal to another NaN.
func sortOrder(a, b float32) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
