//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/tensor"
)

// onDevice runs f with dev as the default device and the global generator
// seeded with seed, restoring the CPU default afterwards.
func onDevice(t testing.TB, dev tensor.Device, seed uint64, f func()) {
	t.Helper()
	if err := tensor.SetDefaultDevice(dev); err != nil {
		t.Fatal(err)
	}
	defer tensor.SetDefaultDevice(tensor.CPU)
	tensor.ManualSeed(seed)
	f()
}

// TestTensorOps runs a composite of the tensor surface (views, broadcasting,
// reductions, matmul, softmax, layer norm, attention, embedding,
// cross-entropy) forward and backward on the GPU and on the CPU from the
// same seed and compares the loss and every gradient. (Dropout masks differ
// between devices; TestDropout checks the GPU's.)
func TestTensorOps(t *testing.T) {
	gpu(t)
	run := func(dev tensor.Device) (vals [][]float32, devs []tensor.Device) {
		onDevice(t, dev, 7, func() {
			x := tensor.Randn(2, 5, 8).RequiresGrad()
			w := tensor.Randn(8, 12).RequiresGrad()
			lnw, lnb := tensor.Randn(8).RequiresGrad(), tensor.Randn(8).RequiresGrad()
			emb := tensor.Randn(11, 8).RequiresGrad()
			idx := tensor.FromInts([]int{1, 3, 3, 10, 0, 2, 5, 7, 3, 9}, 2, 5)
			targets := tensor.FromInts([]int{1, 2, -1, 4, 0, 11, 3, 3, 8, 2}, 10)

			h := x.Add(tensor.Embedding(emb, idx)).LayerNorm(lnw, lnb, 1e-5)
			qkv := h.MatMul(w).Reshape(2, 5, 3, 2, 2).Permute(2, 0, 3, 1, 4) // [3, B, H, T, D]
			q, k, v := qkv.Select(0, 0), qkv.Select(0, 1), qkv.Select(0, 2)
			att := tensor.ScaledDotProductAttention(q, k, v, true) // [B, H, T, D]
			y := att.Transpose(1, 2).Reshape(2, 5, 4)
			y = tensor.Cat([]*tensor.Tensor{y, y.Tanh().GELU(), y.Sigmoid().Dropout(0.3, false)}, -1) // [2, 5, 12]
			logits := y.Reshape(10, 12).Mul(tensor.Arange(1, 13, 1).DivScalar(6)).Sub(y.Reshape(10, 12).MeanKeepDim(0))
			loss := tensor.CrossEntropyIgnore(logits, targets, -1).
				Add(logits.Softmax(-1).Max(1).Sum()).
				Add(logits.LogSumExp(1).Var()).
				Add(logits.Tril(0).Abs().Mean())
			loss.Backward()
			argmax := logits.ArgMax(1).Float()
			for _, u := range []*tensor.Tensor{loss, argmax, x.Grad(), w.Grad(), lnw.Grad(), lnb.Grad(), emb.Grad()} {
				vals = append(vals, u.Float32s())
				devs = append(devs, u.Device())
			}
		})
		return
	}
	gv, gd := run(tensor.CUDA(0))
	cv, _ := run(tensor.CPU)
	names := []string{"loss", "argmax", "x.grad", "w.grad", "ln.weight.grad", "ln.bias.grad", "emb.grad"}
	for i, name := range names {
		if gd[i] != tensor.CUDA(0) {
			t.Errorf("%s lives on %s, want cuda:0", name, gd[i])
		}
		approx.Equal(t, name, gv[i], cv[i], 1e-4, 2e-6)
	}
}

// TestTo moves tensors between devices, with gradients flowing back.
func TestTo(t *testing.T) {
	gpu(t)
	dev := tensor.CUDA(0)
	x := tensor.New([]float32{1, 2, 3, 4, 5, 6}, 2, 3).RequiresGrad()
	y := x.T().To(dev) // a strided view copied to the GPU
	if y.Device() != dev || !y.IsContiguous() {
		t.Fatalf("To: got a tensor on %s (contiguous %v)", y.Device(), y.IsContiguous())
	}
	z := y.MulScalar(2).Sum()
	z.Backward()
	if got := z.Item(); got != 42 {
		t.Errorf("sum on the GPU: got %v, want 42", got)
	}
	if g := x.Grad(); g == nil || g.Device() != tensor.CPU || fmt.Sprint(g.Float32s()) != "[2 2 2 2 2 2]" {
		t.Errorf("gradient back on the CPU: got %v", g)
	}
	ints := tensor.FromInts([]int{3, -1, 7}).To(dev)
	if ints.DType() != tensor.Int64 || fmt.Sprint(ints.Ints()) != "[3 -1 7]" {
		t.Errorf("int64 tensor on the GPU: got %s %v", ints.DType(), ints.Ints())
	}
	if s := ints.To(tensor.CPU).String(); !strings.Contains(s, "3") {
		t.Errorf("printing: %s", s)
	}
	if s := y.String(); !strings.Contains(s, "cuda:0") {
		t.Errorf("a GPU tensor should print its device, got %s", s)
	}
}

// TestNoSilentCPU checks that the GPU never quietly computes with CPU
// memory: mixing devices panics naming the op.
func TestNoSilentCPU(t *testing.T) {
	g, c := gpu(t)
	a := tensor.Ones(3).To(tensor.CUDA(0))
	b := tensor.Ones(3)
	err := tensor.Catch(func() { a.Add(b) })
	if err == nil || !strings.Contains(err.Error(), "Add") {
		t.Errorf("adding a CPU tensor to a GPU tensor: got %v, want a panic naming Add", err)
	}
	err = tensor.Catch(func() {
		g.Unary(tensor.OpExp, tensor.UnaryParams{}, g.Alloc(tensor.Float32, 3), c.FromFloat32s([]float32{1, 2, 3}), whole(3))
	})
	if err == nil || !strings.Contains(err.Error(), "Exp") || !strings.Contains(err.Error(), "cpu") {
		t.Errorf("a CPU storage given to the GPU backend: got %v, want a panic naming Exp and cpu", err)
	}
}

// TestRelease frees a tensor's device memory at once; using it afterwards
// panics.
func TestRelease(t *testing.T) {
	gpu(t)
	dev := tensor.CUDA(0)
	// Reclaim what earlier tests dropped first: otherwise the allocation
	// below may force a collection that frees their memory, and Allocated
	// falls while this test's tensor is added.
	if err := EmptyCache(0); err != nil {
		t.Fatal(err)
	}
	before, err := Memory(0)
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.Zeros(1 << 20).To(dev)
	mid, _ := Memory(0)
	if mid.Allocated < before.Allocated+4<<20 {
		t.Errorf("allocating 4 MiB: allocated went from %d to %d", before.Allocated, mid.Allocated)
	}
	x.Release()
	after, _ := Memory(0)
	if after.Allocated > mid.Allocated-bucket(4<<20) { // (collected tensors may go too)
		t.Errorf("Release: allocated went from %d to %d, want at least %d less", mid.Allocated, after.Allocated, bucket(4<<20))
	}
	if after.Reserved != mid.Reserved {
		t.Errorf("Release should keep the block cached: reserved %d → %d", mid.Reserved, after.Reserved)
	}
	err = tensor.Catch(func() { x.Sum() })
	if err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("using a released tensor: got %v, want a panic about a released storage", err)
	}
	x.Release() // twice is harmless
	if err := EmptyCache(0); err != nil {
		t.Fatal(err)
	}
	if s, _ := Memory(0); s.Reserved > after.Reserved-bucket(4<<20) {
		t.Errorf("EmptyCache: reserved %d, want at most %d", s.Reserved, after.Reserved-bucket(4<<20))
	}
}

// TestOpenErrors checks the errors for devices that do not exist.
func TestOpenErrors(t *testing.T) {
	gpu(t)
	n := DeviceCount()
	if _, err := Open(n); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("cuda:%d", n)) {
		t.Errorf("Open(%d) on a machine with %d devices: got %v", n, n, err)
	}
	if _, err := Memory(-1); err == nil {
		t.Error("Memory(-1) should fail")
	}
	var e *Error
	if errors.As(fmt.Errorf("x: %w", &Error{Op: "MatMul", Err: errors.New("boom")}), &e) && e.Error() != "cuda: MatMul on cuda:0: boom" {
		t.Errorf("Error text: %q", e.Error())
	}
	name, err := DeviceName(0)
	t.Logf("cuda:0 is %q (driver supports CUDA %d), err %v", name, DriverVersion(), err)
}

// TestDropoutWith checks DropoutWith on the GPU: the mask is the device
// kernel's for a seed drawn from the given generator, whatever the global
// generator's state, which it leaves untouched.
func TestDropoutWith(t *testing.T) {
	gpu(t)
	var masks [2][]float32
	var want []float32
	for i := range masks {
		onDevice(t, tensor.CUDA(0), uint64(20+i), func() {
			before := tensor.GlobalGenerator().State()
			masks[i] = tensor.Ones(300, 200).DropoutWith(0.25, true, tensor.NewGenerator(5)).Float32s()
			if !slices.Equal(tensor.GlobalGenerator().State(), before) {
				t.Errorf("DropoutWith with an explicit generator drew from the global one")
			}
			if i == 0 {
				m := tensor.Zeros(300, 200)
				if err := DropoutMask(m, 0.25, tensor.NewGenerator(5).Uint64(), 0); err != nil {
					t.Fatal(err)
				}
				want = m.Float32s()
			}
		})
	}
	for i := range masks {
		if !slices.Equal(masks[i], want) {
			t.Fatalf("DropoutWith(NewGenerator(5)) under global seed %d differs from DropoutMask with that generator's first number", 20+i)
		}
	}
}

// TestDropout checks Tensor.Dropout on the GPU, whose masks are drawn on
// the device: the share of zeros, the scale of the rest, repeatability
// under ManualSeed, and the gradient.
func TestDropout(t *testing.T) {
	gpu(t)
	var mask1, mask2, grad []float32
	for i := range 2 {
		onDevice(t, tensor.CUDA(0), 11, func() {
			x := tensor.Ones(500, 400).RequiresGrad()
			y := x.Dropout(0.25, true)
			y.Sum().Backward()
			if i == 0 {
				mask1, grad = y.Float32s(), x.Grad().Float32s()
			} else {
				mask2 = y.Float32s()
			}
		})
	}
	zeros := 0
	for i, v := range mask1 {
		switch v {
		case 0:
			zeros++
		case 1 / float32(0.75):
		default:
			t.Fatalf("element %d of the dropout output is %v, want 0 or %v", i, v, 1/float32(0.75))
		}
		if grad[i] != v {
			t.Fatalf("gradient %d is %v, want the mask's %v", i, grad[i], v)
		}
		if mask2[i] != v {
			t.Fatalf("the same seed gave another mask at %d: %v and %v", i, v, mask2[i])
		}
	}
	if frac := float64(zeros) / float64(len(mask1)); frac < 0.245 || frac > 0.255 {
		t.Errorf("dropout zeroed %.4f of the elements, want 0.25", frac)
	}
}
