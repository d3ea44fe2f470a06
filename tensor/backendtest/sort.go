package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wickml/wick/tensor"
)

// sortShapes are the (rows, cols) Sort and Scan are checked with: one
// element, short rows, rows longer than a GPU block, and many short rows.
var sortShapes = [][2]int{{1, 1}, {3, 5}, {7, 256}, {5, 1000}, {300, 3}}

// sortInput draws rows with many ties (values on a grid of quarters), a
// few NaNs and infinities, and zeros of both signs.
func sortInput(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch k := r.IntN(40); {
		case k == 0:
			x[i] = float32(math.NaN())
		case k == 1:
			x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		case k == 2:
			x[i] = float32(math.Copysign(0, float64(1-2*r.IntN(2))))
		default:
			x[i] = float32(r.IntN(41)-20) / 4
		}
	}
	return x
}

// sortOrder is Sort's order: NaN above every number, -0 equal to +0.
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

// testSort checks Sort in both directions against a stable sort of each
// row's positions: the positions exactly, the values bit for bit.
func testSort(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, rc := range sortShapes {
		rows, cols := rc[0], rc[1]
		n := rows * cols
		x := sortInput(r, n)
		src := b.FromFloat32s(x)
		for _, desc := range []bool{false, true} {
			name := fmt.Sprintf("Sort %dx%d descending=%v", rows, cols, desc)
			vals, idx := poisoned(b, tensor.Float32, n), poisoned(b, tensor.Int64, n)
			b.Sort(vals, idx, src, rows, cols, desc)
			wantV, wantI := make([]float32, n), make([]int64, n)
			for row := range rows {
				line := x[row*cols : (row+1)*cols]
				pos := make([]int64, cols)
				for i := range pos {
					pos[i] = int64(i)
				}
				slices.SortStableFunc(pos, func(p, q int64) int {
					if desc {
						return sortOrder(line[q], line[p])
					}
					return sortOrder(line[p], line[q])
				})
				for k, p := range pos {
					wantI[row*cols+k], wantV[row*cols+k] = p, line[p]
				}
			}
			checkInts(t, name+" indices", readInts(b, idx), wantI)
			got := read(b, vals)
			for i := range wantV {
				if math.Float32bits(got[i]) != math.Float32bits(wantV[i]) {
					t.Fatalf("%s values: element %d = %v, want %v", name, i, got[i], wantV[i])
				}
			}
		}
	}
}

// testScan checks Scan's running sums and products, forward and reverse:
// accumulated in float64 and rounded at each element, so exactly.
func testScan(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, rc := range sortShapes {
		rows, cols := rc[0], rc[1]
		n := rows * cols
		x := randIn(r, n, 0.5, 1.5) // products of up to 1000 stay in range
		for i := range x {
			if r.IntN(2) == 0 {
				x[i] = -x[i]
			}
			if r.IntN(50) == 0 {
				x[i] = 0
			}
		}
		src := b.FromFloat32s(x)
		for _, op := range []tensor.ScanOp{tensor.ScanSum, tensor.ScanProd} {
			for _, rev := range []bool{false, true} {
				name := fmt.Sprintf("Scan %s %dx%d reverse=%v", op, rows, cols, rev)
				dst := poisoned(b, tensor.Float32, n)
				b.Scan(op, dst, src, rows, cols, rev)
				want := make([]float32, n)
				for row := range rows {
					acc := 0.0
					if op == tensor.ScanProd {
						acc = 1
					}
					for k := range cols {
						j := k
						if rev {
							j = cols - 1 - k
						}
						v := float64(x[row*cols+j])
						if op == tensor.ScanProd {
							acc *= v
						} else {
							acc += v
						}
						want[row*cols+j] = float32(acc)
					}
				}
				got := read(b, dst)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: element %d = %v, want %v", name, i, got[i], want[i])
					}
				}
			}
		}
	}
}
