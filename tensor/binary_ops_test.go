package tensor

import (
	"math"
	"testing"
)

// TestBinaryTable checks the binary table: every op has a row with a name,
// comparisons and only they have a relation and no float forward, and the
// relations give IEEE results with NaN (only Ne holds) on float32 and
// int64 alike.
func TestBinaryTable(t *testing.T) {
	want := map[BinaryOp]bool{OpEq: true, OpNe: true, OpLt: true, OpLe: true, OpGt: true, OpGe: true}
	ops := BinaryOps()
	if len(ops) != 13 {
		t.Fatalf("BinaryOps() has %d ops, want 13", len(ops))
	}
	nan := float32(math.NaN())
	for _, op := range ops {
		d := binaryOps[op]
		if d.name == "" || d.cu == "" {
			t.Errorf("op %d: row without name or cu", int(op))
		}
		if op.IsComparison() != want[op] {
			t.Errorf("%s.IsComparison() = %v", op, op.IsComparison())
		}
		if d.compare != (d.cmp != nil) || d.compare == (d.fwd != nil) {
			t.Errorf("%s: compare %v with cmp set %v and fwd set %v", op, d.compare, d.cmp != nil, d.fwd != nil)
		}
		if !d.compare {
			continue
		}
		for _, c := range []struct {
			a, b float32
		}{{1, 2}, {2, 1}, {2, 2}, {nan, 1}, {1, nan}, {float32(math.Inf(-1)), 0}} {
			var got, ref bool
			got = d.cmp(compare3(c.a, c.b))
			switch op {
			case OpEq:
				ref = c.a == c.b
			case OpNe:
				ref = c.a != c.b
			case OpLt:
				ref = c.a < c.b
			case OpLe:
				ref = c.a <= c.b
			case OpGt:
				ref = c.a > c.b
			case OpGe:
				ref = c.a >= c.b
			}
			if got != ref {
				t.Errorf("%s(%v, %v) = %v, want %v", op, c.a, c.b, got, ref)
			}
			if c.a == c.a && c.b == c.b && c.a > -1e30 { // finite: as int64s too
				if gi := d.cmp(compare3(int64(c.a*1e9), int64(c.b*1e9))); gi != ref {
					t.Errorf("%s on int64 (%v, %v) = %v, want %v", op, c.a, c.b, gi, ref)
				}
			}
		}
	}
}
