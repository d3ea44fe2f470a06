package tensor

import (
	"math"
	"testing"
)

// Every test of the package runs with poisoned uninitialised outputs: an
// element that a kernel writing an emptyOut tensor leaves unwritten is a
// NaN in its result, which the golden and reference comparisons catch.
func init() { poisonUninit = true }

// NoPoison turns the poisoning of uninitialised outputs off until tb ends.
// Every benchmark of the package calls it (those of package tensor_test
// too): they must measure what users run, and filling a fresh buffer with
// poison costs as much as a bandwidth-bound kernel itself (it doubled the
// time of BenchmarkAdd).
func NoPoison(tb testing.TB) {
	old := poisonUninit
	poisonUninit = false
	tb.Cleanup(func() { poisonUninit = old })
}

func TestEmptyOutPoisoned(t *testing.T) {
	for _, n := range []int{0, 1, 7, 5000} {
		out := emptyOut("test", cpu, Float32, []int{n})
		for i, v := range fs(out.storage) {
			if math.Float32bits(v) != math.Float32bits(poison) {
				t.Fatalf("emptyOut(%d)[%d] = %v, want the poison NaN", n, i, v)
			}
		}
	}
}

func TestMakeUninitF32(t *testing.T) {
	defer func(p bool) { poisonUninit = p }(poisonUninit)
	poisonUninit = false
	for _, n := range []int{0, 3, 1023, 1024, 1 << 20} {
		s := makeUninitF32(n)
		if len(s) != n || cap(s) < n {
			t.Fatalf("makeUninitF32(%d): len %d cap %d", n, len(s), cap(s))
		}
		// the memory is usable: write and read back every element
		for i := range s {
			s[i] = float32(i)
		}
		for i := range s {
			if s[i] != float32(i) {
				t.Fatalf("makeUninitF32(%d)[%d] = %v after writing %d", n, i, s[i], i)
			}
		}
	}
}
