//go:build cuda

package cuda

import (
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestEmbeddingBadIndex checks that an index outside the table is never
// read: the gathered row is NaN, the scatter skips it.
func TestEmbeddingBadIndex(t *testing.T) {
	g, _ := gpu(t)
	table := g.FromFloat32s([]float32{1, 2, 3, 4})
	ix := g.FromInt64s([]int64{1, 2, -1})
	out := g.Alloc(tensor.Float32, 6)
	g.Gather(out, table, ix, 3, 2)
	got := g.Float32s(out, whole(6))
	if got[0] != 3 || got[1] != 4 || !math.IsNaN(float64(got[2])) || !math.IsNaN(float64(got[5])) {
		t.Errorf("Gather with bad indices: got %v, want [3 4 NaN NaN NaN NaN]", got)
	}
	g.ScatterAdd(table, ix, g.FromFloat32s([]float32{10, 10, 20, 20, 30, 30}), 3, 2)
	if got := g.Float32s(table, whole(4)); got[0] != 1 || got[1] != 2 || got[2] != 13 || got[3] != 14 {
		t.Errorf("ScatterAdd with bad indices: got %v, want [1 2 13 14]", got)
	}
}
