package tensor

import (
	"math"

	"github.com/chewxy/math32"
	"github.com/wickml/wick/internal/kernels"
	"github.com/wickml/wick/internal/parallel"
)

func (cpuBackend) Reduce(op ReduceOp, dst, src Storage, sl Layout, dim int) {
	s := fs(src)
	outShape := append(cloneInts(sl.Shape[:dim]), sl.Shape[dim+1:]...)
	outStrides := append(cloneInts(sl.Strides[:dim]), sl.Strides[dim+1:]...)
	n, st := sl.Shape[dim], sl.Strides[dim]
	pl := newPlan(outShape, []int{0, sl.Offset}, ContiguousStrides(outShape), outStrides)
	if op == ReduceArgMax || op == ReduceArgMin {
		d := is(dst)
		pl.run(func(o []int, cnt int) {
			for k := range cnt {
				base := o[1] + k*pl.inner[1]
				best, bi := s[base], 0
				for j := 1; j < n; j++ {
					v := s[base+j*st]
					if best != best {
						break
					}
					if (op == ReduceArgMax && (v > best || v != v)) || (op == ReduceArgMin && (v < best || v != v)) {
						best, bi = v, j
					}
				}
				d[o[0]+k] = int64(bi)
			}
		})
		return
	}
	d := fs(dst)
	if op == ReduceSum && len(outShape) == 0 && st == 1 && n >= 2*grain {
		// one long contiguous line: float64 partial sums of chunks on
		// the workers, added in chunk order
		chunk := max(grain, (n+4*parallel.Workers()-1)/(4*parallel.Workers()))
		parts := make([]float64, (n+chunk-1)/chunk)
		line := s[sl.Offset : sl.Offset+n]
		parallelFor(len(parts), 1, func(lo, hi int) {
			for c := lo; c < hi; c++ {
				parts[c] = kernels.SumF64(line[c*chunk : min((c+1)*chunk, n)])
			}
		})
		var acc float64
		for _, v := range parts {
			acc += v
		}
		d[0] = float32(acc)
		return
	}
	if op == ReduceSum && reduceRowsFast && pl.inner[1] == 1 && st != 1 {
		// a run of consecutive outputs reads consecutive inputs (a sum
		// over a leading dimension, such as a bias gradient): add whole
		// rows into float64 accumulators instead of walking each strided
		// line. Every output's sum has the same terms in the same order
		// as reduceLine's, so the results are identical.
		// The plan splits by outputs only; a run is split further here,
		// since each output costs n additions.
		pl.run(func(o []int, cnt int) {
			parallelFor(cnt, max(64, grain/max(n, 1)), func(lo, hi int) {
				var buf [256]float64
				for k0 := lo; k0 < hi; k0 += len(buf) {
					acc := buf[:min(len(buf), hi-k0)]
					clear(acc)
					for j := range n {
						b := o[1] + k0 + j*st
						row := s[b : b+len(acc)]
						for k := range acc {
							acc[k] += float64(row[k])
						}
					}
					dd := d[o[0]+k0 : o[0]+k0+len(acc)]
					for k, v := range acc {
						dd[k] = float32(v)
					}
				}
			})
		})
		return
	}
	pl.run(func(o []int, cnt int) {
		for k := range cnt {
			d[o[0]+k] = reduceLine(op, s, o[1]+k*pl.inner[1], st, n)
		}
	})
}

// reduceRowsFast selects the row-wise accumulation of sums over a strided
// dimension in cpuBackend.Reduce; tests switch it off to compare.
var reduceRowsFast = true

// reduceLine reduces n elements of s starting at base with stride st.
// Sums accumulate in float64.
func reduceLine(op ReduceOp, s []float32, base, st, n int) float32 {
	switch op {
	case ReduceSum:
		if st == 1 {
			return float32(kernels.SumF64(s[base : base+n]))
		}
		var acc float64
		for j := range n {
			acc += float64(s[base+j*st])
		}
		return float32(acc)
	case ReduceMax, ReduceMin:
		if n == 0 {
			return float32(math.NaN())
		}
		best := s[base]
		for j := 1; j < n; j++ {
			v := s[base+j*st]
			if v != v {
				return v
			}
			if (op == ReduceMax && v > best) || (op == ReduceMin && v < best) {
				best = v
			}
		}
		return best
	case ReduceLogSumExp:
		if n == 0 {
			return math32.Inf(-1)
		}
		m := float64(s[base])
		for j := 1; j < n; j++ {
			m = math.Max(m, float64(s[base+j*st]))
		}
		if math.IsInf(m, 0) {
			return float32(m)
		}
		var acc float64
		for j := range n {
			acc += math.Exp(float64(s[base+j*st]) - m)
		}
		return float32(m + math.Log(acc))
	}
	panic("tensor: unknown reduction")
}
