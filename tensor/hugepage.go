package tensor

import (
	"cmp"
	"runtime"
	"slices"
	"unsafe"

	"github.com/wickml/wick/internal/hugepage"
)

// hugeGap is how far apart two storages may lie in memory and still be
// advised as one range by HugePages: a model's weights are many separate
// allocations, most under 2 MiB, that the Go heap places side by side
// with a few pages between them.
const hugeGap = 64 << 10

// HugePages asks the operating system to back the host memory of the
// tensors' storages with transparent huge pages (2 MiB) and returns the
// bytes it asked for. It is meant for long-lived tensors that are read
// from memory over and over, such as a model's weights during generation,
// where 4 KiB pages cost a TLB miss and a stop of the hardware prefetcher
// at every page; package nn calls it on the parameters of every model it
// builds, loads or converts (PyTorch does the like for its large CPU
// allocations when THP_MEM_ALLOC_ENABLE=1 is set).
//
// Storages that lie within 64 KiB of one another in memory are advised as
// one range, the process's own heap between them included, and only the
// whole 2 MiB pages inside a range: a storage alone under 2 MiB is left
// as it is. Nothing is moved and no element changes. HugePages does
// nothing for tensors on other devices, off Linux, where the kernel's
// transparent huge pages are turned off ("never"), or when the
// environment sets WICK_HUGEPAGES=0 at start-up. It is safe to call
// while other goroutines read the tensors.
func HugePages(ts ...*Tensor) int64 {
	type span struct{ lo, hi uintptr }
	var spans []span
	for _, t := range ts {
		if t == nil {
			continue
		}
		s, ok := t.storage.(*cpuStorage)
		if !ok || s.gone != nil {
			continue
		}
		var p unsafe.Pointer
		switch {
		case len(s.f) > 0:
			p = unsafe.Pointer(&s.f[0])
		case len(s.h) > 0:
			p = unsafe.Pointer(&s.h[0])
		case len(s.i) > 0:
			p = unsafe.Pointer(&s.i[0])
		default:
			continue
		}
		lo := uintptr(p)
		spans = append(spans, span{lo, lo + uintptr(s.Len()*s.dt.ItemSize())})
	}
	// a storage viewed by several of ts gives the same span several
	// times, merged into one below like neighbours
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	var merged []span
	for _, r := range spans {
		if k := len(merged) - 1; k >= 0 && r.lo <= merged[k].hi+hugeGap {
			merged[k].hi = max(merged[k].hi, r.hi)
			continue
		}
		merged = append(merged, r)
	}
	var total int64
	for _, r := range merged {
		total += int64(hugepage.Advise(r.lo, r.hi-r.lo))
	}
	runtime.KeepAlive(ts) // and so their storages, allocated through the calls
	return total
}
