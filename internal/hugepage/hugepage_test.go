package hugepage

import "testing"

func TestInterior(t *testing.T) {
	const M = Size
	for _, c := range []struct{ addr, n, lo, hi uintptr }{
		{0, 2 * M, 0, 2 * M},
		{M, 3 * M, M, 4 * M},
		{M + 4096, M, 2 * M, 2 * M},    // no whole page inside
		{2*M - 1, M, 2 * M, 2 * M},     // a page's worth that straddles
		{2*M - 1, M + 2, 2 * M, 3 * M}, // a byte more each side: one whole page
		{3 * M, 10, 3 * M, 3 * M},      // under a page
		{5*M + 8, 4 * M, 6 * M, 9 * M}, // interior of an unaligned buffer
		{4 * M, M - 1, 4 * M, 4 * M},   // starts aligned, ends short
		{7 * M, 0, 7 * M, 7 * M},       // empty
		{7*M + 1, 0, 8 * M, 8 * M},     // empty, unaligned
		{9*M - 4096, M + 4096, 9 * M, 10 * M},
	} {
		lo, hi := Interior(c.addr, c.n)
		if lo != c.lo || hi != c.hi {
			t.Errorf("Interior(%#x, %#x) = %#x, %#x; want %#x, %#x", c.addr, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestAdviseSmall(t *testing.T) {
	b := make([]byte, Size-1)
	if got := Advise(uintptrOf(b), uintptr(len(b))); got != 0 {
		t.Errorf("Advise of %d bytes = %d, want 0 (no whole huge page)", len(b), got)
	}
	if got := Advise(0, 4*Size); got != 0 {
		t.Errorf("Advise(0, …) = %d, want 0", got)
	}
}

func TestAdviseDisabled(t *testing.T) {
	b := make([]byte, 4*Size)
	defer func(d bool) { Disabled = d }(Disabled)
	Disabled = true
	if got := Advise(uintptrOf(b), uintptr(len(b))); got != 0 {
		t.Errorf("Advise with WICK_HUGEPAGES=0 = %d, want 0", got)
	}
}
