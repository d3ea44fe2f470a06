package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/chewxy/math32"
	"github.com/wickml/wick/tensor"
)

// sortedTopK and sortedTopP are keepTopK's and keepTopP's rows as they
// were computed before sample.go, by sorting the whole row: the
// references that kthLargest and nucleus must equal exactly.
func sortedTopK(row []float32, k int) []float32 {
	sorted := slices.Clone(row)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] > sorted[j] })
	out := slices.Clone(row)
	for j, v := range out {
		if v < sorted[k-1] {
			out[j] = math32.Inf(-1)
		}
	}
	return out
}

func sortedTopP(row, pr []float32, p float32) []float32 {
	out := slices.Clone(row)
	order := make([]int, len(pr))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return pr[order[i]] > pr[order[j]] })
	var sum float32
	for k, i := range order {
		if k > 0 && sum >= p {
			out[i] = math32.Inf(-1)
		}
		sum += pr[i]
	}
	return out
}

// sampleRows returns rows of logits of several kinds: peaked, flat, with
// many equal values, with -Inf entries.
func sampleRows(r *rand.Rand, n int) [][]float32 {
	var rows [][]float32
	for kind := range 5 {
		row := make([]float32, n)
		for j := range row {
			switch kind {
			case 0: // peaked: a trained model's
				row[j] = float32(r.NormFloat64() * 6)
			case 1: // flat: an untrained model's
				row[j] = float32(r.NormFloat64() * 0.01)
			case 2: // few distinct values: ties everywhere
				row[j] = float32(r.IntN(7))
			case 3: // masked entries
				row[j] = float32(r.NormFloat64() * 3)
				if r.IntN(4) == 0 {
					row[j] = math32.Inf(-1)
				}
			case 4: // one token far ahead
				row[j] = float32(r.NormFloat64())
				if j == n/3 {
					row[j] = 40
				}
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// TestSampleSelectionMatchesSort checks that keepTopK and keepTopP give,
// bit for bit, the rows of sorting the whole vocabulary, on vocabularies
// large enough for the selection to run.
func TestSampleSelectionMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	same := func(got, want []float32) bool {
		return slices.EqualFunc(got, want, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) })
	}
	for _, n := range []int{7, 300, 5000, 20000} {
		for kind, row := range sampleRows(r, n) {
			x := tensor.New(slices.Clone(row), 1, n)
			for _, k := range []int{1, 2, 50, n / 9, n / 2, n} {
				if k < 1 || k > n {
					continue
				}
				if got := keepTopK(x, k).Float32s(); !same(got, sortedTopK(row, k)) {
					t.Fatalf("n=%d kind %d: keepTopK(%d) differs from the sort", n, kind, k)
				}
			}
			pr := x.Softmax(-1).Float32s()
			for _, p := range []float32{0.01, 0.5, 0.9, 0.95, 0.999, 1 - 1e-7} {
				if got := keepTopP(x, p).Float32s(); !same(got, sortedTopP(row, pr, p)) {
					t.Fatalf("n=%d kind %d: keepTopP(%v) differs from the sort", n, kind, p)
				}
			}
		}
	}
	// the selection itself, where it runs
	row := sampleRows(r, 20000)[0]
	pr := tensor.New(row, 1, len(row)).Softmax(-1).Float32s()
	if _, ok := nucleus(pr, 0.9); !ok {
		t.Error("nucleus gave up on a peaked row of 20000")
	}
	if v := kthLargest(row, 50); v != sortedKth(row, 50) {
		t.Errorf("kthLargest = %v, want %v", v, sortedKth(row, 50))
	}
}

func sortedKth(row []float32, k int) float32 {
	s := slices.Clone(row)
	sort.Slice(s, func(i, j int) bool { return s[i] > s[j] })
	return s[k-1]
}
