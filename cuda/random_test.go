//go:build cuda

package cuda

import (
	"math"
	"testing"

	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/internal/philox"
	"github.com/wickml/wick/tensor"
)

func gpuTensor(t *testing.T, n int) *tensor.Tensor {
	t.Helper()
	var x *tensor.Tensor
	if err := tensor.Catch(func() { x = tensor.Zeros(n).To(tensor.CUDA(0)) }); err != nil {
		t.Fatal(err)
	}
	return x
}

func TestRandom(t *testing.T) {
	gpu(t)
	const seed, offset = 0x1234_5678_9abc_def0, 7
	for _, n := range []int{1, 5, 4099, 1 << 20} {
		u := gpuTensor(t, n)
		if err := RandUniform(u, seed, offset); err != nil {
			t.Fatal(err)
		}
		z := gpuTensor(t, n)
		if err := RandNormal(z, seed, offset); err != nil {
			t.Fatal(err)
		}
		m := gpuTensor(t, n)
		if err := DropoutMask(m, 0.25, seed, offset); err != nil {
			t.Fatal(err)
		}
		uv, zv, mv := u.Float32s(), z.Float32s(), m.Float32s()
		var sum, sumSq float64
		for i := range n {
			w := philox.Group(uint64(i/4), seed, offset)
			want := float32(w[i%4]>>8) / (1 << 24)
			if uv[i] != want {
				t.Fatalf("RandUniform n=%d: element %d is %v, want %v", n, i, uv[i], want)
			}
			wantMask := float32(1 / (1 - float32(0.25)))
			if want < 0.25 {
				wantMask = 0
			}
			if mv[i] != wantMask {
				t.Fatalf("DropoutMask n=%d: element %d is %v, want %v", n, i, mv[i], wantMask)
			}
			p := i % 4 / 2
			u1 := float64(w[2*p]>>8+1) / (1 << 24)
			u2 := float64(w[2*p+1]>>8) / (1 << 24)
			rad := math.Sqrt(-2 * math.Log(u1))
			wantZ := float32(rad * math.Cos(2*math.Pi*u2))
			if i%2 == 1 {
				wantZ = float32(rad * math.Sin(2*math.Pi*u2))
			}
			if !approx.Scalar(float64(zv[i]), float64(wantZ), 1e-5, 2e-6) {
				t.Fatalf("RandNormal n=%d: element %d is %v, want %v", n, i, zv[i], wantZ)
			}
			sum += float64(zv[i])
			sumSq += float64(zv[i]) * float64(zv[i])
		}
		if n == 1<<20 {
			mean, variance := sum/float64(n), sumSq/float64(n)-sum*sum/float64(n)/float64(n)
			if math.Abs(mean) > 0.01 || math.Abs(variance-1) > 0.01 {
				t.Errorf("RandNormal: mean %v variance %v, want 0 and 1", mean, variance)
			}
		}
	}
	// a new offset gives other numbers
	a, b := gpuTensor(t, 8), gpuTensor(t, 8)
	RandUniform(a, 1, 0)
	RandUniform(b, 1, 1)
	if av, bv := a.Float32s(), b.Float32s(); av[0] == bv[0] && av[1] == bv[1] {
		t.Errorf("offsets 0 and 1 drew the same numbers %v", av)
	}
}
