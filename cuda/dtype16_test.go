//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestTensor16 moves bfloat16 and float16 tensors to the GPU and back (the
// bit patterns unchanged, NaN payloads included), casts them there with
// ToDType against the CPU's casts bit for bit (every pattern to float32,
// random float32s to 16 bits), and differentiates a cast on the GPU.
func TestTensor16(t *testing.T) {
	gpu(t)
	dev := tensor.CUDA(0)
	r := newRNG(t)
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	for _, dt := range []tensor.DType{tensor.BFloat16, tensor.Float16} {
		h := tensor.FromBits16(dt, all, 256, 256)
		g := h.To(dev)
		if g.Device() != dev || g.DType() != dt {
			t.Fatalf("%s To(%s): got a %s tensor on %s", dt, dev, g.DType(), g.Device())
		}
		if got := g.Bits16(); !slices.Equal(got, all) {
			t.Errorf("%s: the bit patterns changed on the way to %s and back", dt, dev)
		}
		if got := g.Transpose(0, 1).To(tensor.CPU).Bits16(); !slices.Equal(got, h.Transpose(0, 1).Bits16()) {
			t.Errorf("%s: a transposed view read back from %s differs from the CPU's", dt, dev)
		}
		want, got := h.ToDType(tensor.Float32).Float32s(), g.ToDType(tensor.Float32).Float32s()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s → float32 on %s: pattern %#04x gives %#08x, the CPU %#08x", dt, dev, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
		x := make([]float32, 20000)
		for i := range x {
			x[i] = float32(r.NormFloat64()) * float32(math.Pow(2, float64(r.IntN(60)-30)))
		}
		xc := tensor.New(x, 100, 200)
		wantH := xc.T().ToDType(dt).Bits16()
		if gotH := xc.To(dev).T().ToDType(dt).Bits16(); !slices.Equal(gotH, wantH) {
			t.Errorf("float32 → %s of a transposed view on %s differs from the CPU's", dt, dev)
		}
		// the cast is differentiable: d/dx Σ w·cast(x) = cast back of w
		xg := xc.To(dev).RequiresGrad()
		w := tensor.Randn(100, 200).To(dev)
		xg.ToDType(dt).ToDType(tensor.Float32).Mul(w).Sum().Backward()
		wantG := w.ToDType(dt).ToDType(tensor.Float32).Float32s()
		gotG := xg.Grad().Float32s()
		if !slices.Equal(gotG, wantG) {
			t.Errorf("the gradient of a cast to %s on %s is not the output gradient cast back", dt, dev)
		}
		// printed as PyTorch prints it, values from the CPU's copy
		p := g.Reshape(-1).Slice(0, 0x3C00, 0x3C02)
		wantP := fmt.Sprint(h.Reshape(-1).Slice(0, 0x3C00, 0x3C02))
		wantP = wantP[:len(wantP)-1] + ", device='cuda:0', dtype=torch." + dt.String() + ")"
		wantP = strings.Replace(wantP, ", dtype=torch."+dt.String()+", device", ", device", 1)
		if gotP := fmt.Sprint(p); gotP != wantP {
			t.Errorf("%s tensor on %s prints as %q, want %q", dt, dev, gotP, wantP)
		}
	}
}
