//go:build cuda

package cuda

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestAllocLimit checks that tensor.MaxAllocBytes guards device memory:
// a tensor op and a direct backend allocation above the limit panic with a
// *tensor.Error naming the op before anything reaches the driver, and the
// device still works afterwards.
func TestAllocLimit(t *testing.T) {
	g, _ := gpu(t)
	defer tensor.SetMaxAllocBytes(tensor.SetMaxAllocBytes(1 << 20))
	one := tensor.Ones(1, 1).To(tensor.CUDA(0))
	// reclaim now what earlier tests left unreachable, so that no cleanup
	// lowers Allocated between the two readings
	g.(*backend).d.alloc.collect()
	before, err := Memory(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op string
		f  func()
	}{
		{"To", func() { tensor.Ones(1, 1).Expand(1<<10, 1<<10).To(tensor.CUDA(0)) }},
		{"Exp", func() { one.Expand(1<<10, 1<<10).Exp() }},
		{"Alloc", func() { g.Alloc(tensor.Float32, 1<<18+1) }},
		{"FromFloat32s", func() { g.FromFloat32s(make([]float32, 1<<18+1)) }},
	} {
		err := tensor.Catch(c.f)
		var e *tensor.Error
		if !errors.As(err, &e) || e.Op != c.op || !strings.Contains(e.Msg, "allocation limit") {
			t.Errorf("%s: got %v, want a *tensor.Error for %s about the allocation limit", c.op, err, c.op)
		}
	}
	after, err := Memory(0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(one) // in both readings
	if after.Reserved != before.Reserved || after.Allocated != before.Allocated {
		t.Errorf("device memory went from %+v to %+v", before, after)
	}
	if got := tensor.Ones(1 << 10).To(tensor.CUDA(0)).Sum().Item(); got != 1<<10 {
		t.Errorf("sum of 1024 ones on the device after the failures = %v", got)
	}
}
