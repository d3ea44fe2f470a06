package tensor

import "slices"

// Gradient buffers let a data-parallel wrapper (package dist) lay the
// gradients of many parameters out in one flat buffer, as PyTorch's
// DistributedDataParallel does with gradient_as_bucket_view: Backward
// writes each gradient straight into its slot of the buffer, and the
// buffer is reduced across processes in one collective, with no copies in
// or out.

// FromHostFloat32s returns a CPU tensor of the given shape (len(data)
// elements when shape is empty) whose storage is data itself, not a copy:
// writes through either show in the other. It is HostFloat32s's converse,
// for code that shares memory in place, such as dist's gradient buckets
// (slices of one buffer, each a tensor of its own).
//
// FromHostFloat32s panics if the shape does not have len(data) elements.
func FromHostFloat32s(data []float32, shape ...int) *Tensor {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	if n := checkAlloc("FromHostFloat32s", Float32, shape); n != len(data) {
		panicf("FromHostFloat32s", "shape %v needs %d elements, got %d", shape, n, len(data))
	}
	b, err := BackendFor(CPU)
	if err != nil {
		panic(err)
	}
	return newTensor(b, &cpuStorage{dt: Float32, f: data[:len(data):len(data)]}, contiguousLayout(slices.Clone(shape)))
}

// SetGradBuffer makes buf the place where Backward accumulates t's
// gradient, multiplied by scale: while t has no gradient, the next
// accumulation writes scale·g into buf and makes buf t's Grad; while
// Grad is buf, later accumulations add scale·g into buf in place. A
// gradient set otherwise (SetGrad) is accumulated as without a buffer.
// ZeroGrad clears Grad as usual; the buffer stays. SetGradBuffer(nil, 0)
// removes it. buf, which t does not own, keeps the last gradient written
// into it until the next Backward overwrites it.
//
// SetGradBuffer panics if t is not a leaf that requires a gradient, or if
// buf is not a tensor of t's dtype and shape on t's device, contiguous from
// the start of its storage, that does not itself require a gradient.
func (t *Tensor) SetGradBuffer(buf *Tensor, scale float32) {
	if buf == nil {
		t.gradInto, t.gradScale = nil, 0
		return
	}
	switch {
	case !t.requiresGrad || !t.IsLeaf():
		panicf("SetGradBuffer", "want a leaf that requires a gradient, got a tensor of shape %v (requires grad %v, leaf %v)", t.layout.Shape, t.requiresGrad, t.IsLeaf())
	case buf.DType() != t.DType() || !slices.Equal(buf.layout.Shape, t.layout.Shape) || buf.Device() != t.Device():
		panicf("SetGradBuffer", "want a %s buffer of shape %v on %s, got %s of shape %v on %s", t.DType(), t.layout.Shape, t.Device(), buf.DType(), buf.layout.Shape, buf.Device())
	case !buf.IsContiguous() || buf.layout.Offset != 0:
		panicf("SetGradBuffer", "the buffer of shape %v must be contiguous from the start of its storage, got strides %v and offset %d", buf.layout.Shape, buf.layout.Strides, buf.layout.Offset)
	case buf.requiresGrad:
		panicf("SetGradBuffer", "the buffer of shape %v requires a gradient itself", buf.layout.Shape)
	}
	t.gradInto, t.gradScale = buf, scale
}

// GradBuffer returns the buffer and scale set by SetGradBuffer (nil, 0
// when none is).
func (t *Tensor) GradBuffer() (buf *Tensor, scale float32) { return t.gradInto, t.gradScale }

// accumulateInto accumulates a leaf's gradient g into its gradient buffer,
// reporting false when the buffer does not apply (Grad is another tensor).
func (t *Tensor) accumulateInto(g *Tensor) bool {
	buf, s := t.gradInto, t.gradScale
	switch t.grad {
	case nil:
		if s == 1 {
			buf.backend.Copy(buf.storage, buf.layout, g.storage, g.layout)
		} else {
			buf.backend.Unary(OpMulScalar, UnaryParams{A: s}, buf.storage, g.storage, g.layout)
		}
		t.grad = buf
		return true
	case buf:
		if s != 1 {
			g = g.MulScalar(s)
		}
		buf.backend.Binary(OpAdd, buf.storage, buf.storage, buf.layout, g.storage, g.layout)
		return true
	}
	return false
}
