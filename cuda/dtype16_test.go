//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/internal/approx"
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

// TestOps16 runs a small bfloat16 (and float16) network forward and
// backward on the GPU and on the CPU from the same float32 leaves, cast to
// the dtype in the graph: an embedding
// lookup, products of 16-bit operands (batched, transposed, and a 16-bit
// weight times float32 activations), elementwise ops with broadcasting,
// Where, a softmax and a mean of 16-bit tensors, and a comparison; the loss (summed in float32) and every gradient must
// agree within the dtype's tolerance (both devices sum products in
// float32 and round each op once, in possibly different orders).
func TestOps16(t *testing.T) {
	gpu(t)
	for _, dt := range []tensor.DType{tensor.BFloat16, tensor.Float16} {
		tensor.ManualSeed(11)
		emb0 := tensor.Randn(13, 16)
		x0 := tensor.Randn(2, 5, 16)
		w0 := tensor.Randn(16, 24).MulScalar(0.25)
		v0 := tensor.Randn(2, 24, 8).MulScalar(0.25)
		bias0 := tensor.Randn(8) // broadcast: its gradient sums over rows
		idx := tensor.FromInts([]int{1, 3, 3, 12, 0, 2, 5, 7, 3, 9}, 2, 5)
		run := func(dev tensor.Device) (vals [][]float32, devs []tensor.Device) {
			// float32 leaves (master weights),
			// cast to the dtype in the graph as autocast casts them
			leaves := make([]*tensor.Tensor, 5)
			for i, x := range []*tensor.Tensor{emb0, x0, w0, v0, bias0} {
				leaves[i] = x.To(dev).Detach().RequiresGrad()
			}
			emb, x, w, v, bias := leaves[0].ToDType(dt), leaves[1].ToDType(dt), leaves[2].ToDType(dt), leaves[3].ToDType(dt), leaves[4].ToDType(dt)
			h := x.Add(tensor.Embedding(emb, idx.To(dev))).GELU()           // [2, 5, 16]
			a := h.MatMul(w).Tanh()                                         // [2, 5, 24]
			o := a.MatMul(v).Add(bias).Mul(a.Slice(2, 0, 8).Sigmoid())      // [2, 5, 8], batched
			p := o.Transpose(1, 2).MatMul(a.Slice(2, 0, 5).Transpose(1, 2)) // transposed operands
			mixed := x0.To(dev).Reshape(10, 16).MatMul(w)                   // float32 × 16-bit
			gt := o.Gt(o.Slice(1, 0, 1))                                    // a comparison, float32
			loss := o.ToDType(tensor.Float32).Square().Mean().
				Add(p.ToDType(tensor.Float32).Mean()).
				Add(mixed.Sin().Mean()).
				Add(gt.Mul(o.ToDType(tensor.Float32)).Sum().MulScalar(0.01)).
				Add(tensor.Where(gt, o, o.Neg()).Softmax(-1).Mean().ToDType(tensor.Float32))
			loss.Backward()
			for _, u := range append([]*tensor.Tensor{loss, o}, leaves[0].Grad(), leaves[1].Grad(), leaves[2].Grad(), leaves[3].Grad(), leaves[4].Grad()) {
				vals = append(vals, u.ToDType(tensor.Float32).Float32s())
				devs = append(devs, u.Device())
			}
			return vals, devs
		}
		got, devs := run(tensor.CUDA(0))
		want, _ := run(tensor.CPU)
		names := []string{"loss", "output", "embedding grad", "x grad", "w grad", "v grad", "bias grad"}
		// a few roundings to the dtype on either side, chained through
		// the network: a relative tolerance of 8 units of the dtype's
		// roundoff, and an absolute one for elements that cancel
		rtol := 8 * 0x1p-8
		if dt == tensor.Float16 {
			rtol = 8 * 0x1p-11
		}
		for i := range got {
			if devs[i] != tensor.CUDA(0) {
				t.Errorf("%s %s: computed on %s, want cuda:0", dt, names[i], devs[i])
			}
			if j := approx.Index(got[i], want[i], rtol, rtol/4); j >= 0 {
				t.Errorf("%s %s: element %d: cuda %v, cpu %v", dt, names[i], j, got[i][j], want[i][j])
			}
		}
	}
}
