package tensor

import (
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/wickml/wick/internal/hugepage"
)

// TestHugePages advises a tensor of 12 MiB, a view of it, a small tensor
// and a bfloat16 one: the large storages get their whole huge pages asked
// for once each (on Linux with transparent huge pages), the small one
// alone nothing, and no element changes.
func TestHugePages(t *testing.T) {
	if hugepage.Disabled {
		t.Skip("WICK_HUGEPAGES=0 in the environment")
	}
	big := Arange(0, 3<<20, 1).Reshape(1024, 3072)
	want := big.Float32s()
	view := big.Narrow(0, 100, 10).T()
	small := Ones(1000)
	half := Arange(0, 3<<20, 1).ToDType(BFloat16)
	halfWant := half.Float32s()

	if got := HugePages(small, nil); got != 0 {
		t.Errorf("HugePages(4 KB tensor) = %d, want 0", got)
	}
	once := HugePages(big)
	again := HugePages(big, view, big)
	if runtime.GOOS == "linux" && hugepage.Enabled() != "" {
		s := big.storage.(*cpuStorage)
		lo, hi := hugepage.Interior(uintptr(unsafe.Pointer(&s.f[0])), uintptr(len(s.f)*4))
		if once != int64(hi-lo) || once < 5*hugepage.Size {
			t.Errorf("HugePages(12 MiB tensor) = %d, want its whole huge pages' %d", once, hi-lo)
		}
		if again != once {
			t.Errorf("HugePages(big, a view of it, big) = %d, want the storage once, %d", again, once)
		}
		marked, _, err := hugepage.Mapped(lo, hi)
		if err != nil || !marked {
			t.Errorf("the storage's pages lack MADV_HUGEPAGE's mark (err %v)", err)
		}
		if got := HugePages(half); got < 2*hugepage.Size {
			t.Errorf("HugePages(6 MiB bfloat16 tensor) = %d, want at least %d", got, 2*hugepage.Size)
		}
	}
	if !slices.Equal(big.Float32s(), want) || !slices.Equal(half.Float32s(), halfWant) {
		t.Error("HugePages changed a tensor's elements")
	}
}

// TestHugePagesNeighbours advises storages that lie side by side, each
// under 2 MiB (as a model's projections do): together they cover whole
// huge pages, which HugePages asks for though none alone holds one.
func TestHugePagesNeighbours(t *testing.T) {
	if hugepage.Disabled || runtime.GOOS != "linux" || hugepage.Enabled() == "" {
		t.Skip("needs Linux's transparent huge pages")
	}
	slab := make([]float32, 4<<20) // 16 MiB cut into 16 storages of 1 MiB
	var ts []*Tensor
	for i := range 16 {
		part := slab[i<<18 : (i+1)<<18 : (i+1)<<18]
		ts = append(ts, newTensor(cpuBackend{}, &cpuStorage{dt: Float32, f: part}, contiguousLayout([]int{1 << 18})))
	}
	lo, hi := hugepage.Interior(uintptr(unsafe.Pointer(&slab[0])), uintptr(len(slab)*4))
	if got := HugePages(ts...); got != int64(hi-lo) {
		t.Errorf("HugePages(16 adjacent 1 MiB storages) = %d, want %d", got, hi-lo)
	}
	if got := HugePages(ts[0]); got != 0 {
		t.Errorf("HugePages(one 1 MiB storage) = %d, want 0", got)
	}
	runtime.KeepAlive(slab)
}

func TestHugePagesDisabled(t *testing.T) {
	defer func(d bool) { hugepage.Disabled = d }(hugepage.Disabled)
	hugepage.Disabled = true
	if got := HugePages(Zeros(1 << 22)); got != 0 {
		t.Errorf("HugePages with WICK_HUGEPAGES=0 = %d, want 0", got)
	}
}
