package tensor

import (
	"slices"
	"testing"
)

// maskingCPU is the CPU backend with a DropoutMask method, standing in for
// a device that draws dropout masks itself (package cuda's backend): it
// records the seeds it is given and keeps every element.
type maskingCPU struct {
	cpuBackend
	seeds *[]uint64
}

func (b maskingCPU) DropoutMask(dst Storage, n int, p float32, seed uint64) {
	*b.seeds = append(*b.seeds, seed)
	for i := range fs(dst)[:n] {
		fs(dst)[i] = 1 / (1 - p)
	}
}

var _ DropoutMasker = maskingCPU{}

// TestDropoutWithMasker checks the path of backends with their own mask
// kernel: the seed comes from the given generator (the global one for
// Dropout), one draw per mask, and an explicit generator leaves the global
// one untouched.
func TestDropoutWithMasker(t *testing.T) {
	var seeds []uint64
	b := maskingCPU{seeds: &seeds}
	x := newTensor(b, b.FromFloat32s([]float32{1, 2, 3, 4}), contiguousLayout([]int{2, 2}))

	ManualSeed(1)
	before := GlobalGenerator().State()
	gen := NewGenerator(3)
	y := x.DropoutWith(0.5, true, gen)
	x.DropoutWith(0.5, true, gen)
	ref := NewGenerator(3)
	if want := []uint64{ref.Uint64(), ref.Uint64()}; !slices.Equal(seeds, want) {
		t.Errorf("DropoutWith passed the seeds %v, want NewGenerator(3)'s first two numbers %v", seeds, want)
	}
	if !slices.Equal(GlobalGenerator().State(), before) {
		t.Errorf("DropoutWith with an explicit generator drew from the global one")
	}
	if got := y.Float32s(); !slices.Equal(got, []float32{2, 4, 6, 8}) {
		t.Errorf("DropoutWith with a mask of 2s gave %v", got)
	}

	seeds = seeds[:0]
	ManualSeed(4)
	x.Dropout(0.5, true)
	x.DropoutWith(0.5, true, nil)
	ref = NewGenerator(4)
	if want := []uint64{ref.Uint64(), ref.Uint64()}; !slices.Equal(seeds, want) {
		t.Errorf("Dropout after ManualSeed(4) passed the seeds %v, want %v", seeds, want)
	}
}
