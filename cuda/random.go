//go:build cuda

package cuda

import (
	"fmt"

	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

// RandUniform fills the contiguous float32 tensor t on a GPU in place with
// numbers uniform in [0, 1), drawn on the device by the counter-based
// Philox4x32-10 generator (csrc/random.cu): the result depends only on
// seed, offset and the element index, so use a new offset (or seed) for
// each independent draw. It returns an error only when t's device cannot
// be used; a tensor that is not a contiguous float32 tensor on a GPU is a
// programmer error and panics.
//
// tensor.Rand and tensor.Randn draw on the host from the global generator
// (so that a seed gives the same numbers on every device); these functions
// are the fast path for code that wants device-side draws.
func RandUniform(t *tensor.Tensor, seed, offset uint64) error {
	return fillRandom("RandUniform", t, func(b *backend, dst cu.DevicePtr, n int) {
		a := &args{}
		a.ptr(dst).i64(n).u64(seed).u64(offset)
		b.d.launch1D("RandUniform", b.d.k.randUniform, (n+3)/4, a)
	})
}

// RandNormal is RandUniform for standard normal numbers (Box-Muller on
// Philox words).
func RandNormal(t *tensor.Tensor, seed, offset uint64) error {
	return fillRandom("RandNormal", t, func(b *backend, dst cu.DevicePtr, n int) {
		a := &args{}
		a.ptr(dst).i64(n).u64(seed).u64(offset)
		b.d.launch1D("RandNormal", b.d.k.randNormal, (n+3)/4, a)
	})
}

// DropoutMask fills t like RandUniform but with a dropout mask: 0 with
// probability p and 1/(1−p) otherwise (the factor that keeps the
// expectation), ready to multiply with the activations. (Tensor.Dropout on
// a GPU uses the same kernel, through tensor.DropoutMasker.)
func DropoutMask(t *tensor.Tensor, p float32, seed, offset uint64) error {
	if p < 0 || p >= 1 {
		panic(&tensor.Error{Op: "DropoutMask", Msg: fmt.Sprintf("probability has to be in [0, 1), got %v", p)})
	}
	return fillRandom("DropoutMask", t, func(b *backend, dst cu.DevicePtr, n int) {
		a := &args{}
		a.ptr(dst).i64(n).f32(p).f32(1 / (1 - p)).u64(seed).u64(offset)
		b.d.launch1D("DropoutMask", b.d.k.dropoutMask, (n+3)/4, a)
	})
}

func fillRandom(op string, t *tensor.Tensor, run func(b *backend, dst cu.DevicePtr, n int)) error {
	dev := t.Device()
	if dev.Kind != tensor.KindCUDA {
		panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("expected a tensor on a CUDA device, got one on %s", dev)})
	}
	if t.DType() != tensor.Float32 || !t.IsContiguous() {
		panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("expected a contiguous float32 tensor, got %s%v with strides %v", t.DType(), t.Shape(), t.Strides())})
	}
	d, err := openDevice(dev.Index)
	if err != nil {
		return err
	}
	n := t.Numel()
	s := d.backend.rows(op, t.Storage(), t.Offset()+n)
	if n == 0 {
		return nil
	}
	defer d.enter()()
	defer keepAlive(s)
	run(d.backend, s.ptr(op, t.Offset()), n)
	return nil
}

// DropoutMask implements tensor.DropoutMasker: Tensor.Dropout draws its
// masks on the device (offset 0 of the Philox stream of seed).
func (b *backend) DropoutMask(dst tensor.Storage, n int, p float32, seed uint64) {
	const op = "Dropout"
	defer b.d.enter()()
	d := b.rows(op, dst, n)
	defer keepAlive(d)
	if n == 0 {
		return
	}
	a := &args{}
	a.ptr(d.ptr(op, 0)).i64(n).f32(p).f32(1 / (1 - p)).u64(seed).u64(0)
	b.d.launch1D(op, b.d.k.dropoutMask, (n+3)/4, a)
}

var _ tensor.DropoutMasker = (*backend)(nil)
