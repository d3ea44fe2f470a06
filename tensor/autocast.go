package tensor

import (
	"slices"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/internal/kernels"
)

// Autocast (automatic mixed precision) belongs to a goroutine, as grad mode
// does: Autocast(BFloat16, f) changes the operations that f runs on the
// calling goroutine and on no other, through autograd.WithLocal. Inside a
// region, the products (MatMul, and through it nn's Linear and the
// products of AttentionQKV, CausalAttention and ScaledDotProductAttention)
// round their operands to the region's dtype, multiply them with float32
// sums and return float32; every other operation runs as it does outside
// (float32), as torch.autocast's CPU policy runs softmax, log-softmax,
// layer norm and the losses in float32.
//
// Unlike PyTorch, whose autocast products return bfloat16, Wick's return
// float32: the sums are float32 anyway, and the operations after a
// product (bias, activation, residual, softmax) then neither round nor
// widen again. The backward products run the same way: the output's
// gradient is rounded to the region's dtype once per product and
// multiplied with the saved 16-bit operands, summing in float32; the
// gradients that reach the float32 inputs (the master weights) are
// float32.
//
// A leaf that requires a gradient (a parameter) is rounded once per
// region however often it is used: the first product that reads it, or a
// view of it (Linear's Wᵀ), rounds the leaf's whole storage and keeps the
// copy until the region ends. Parameters therefore must not change inside
// a region: run the forward pass (and the loss) inside it and Backward and
// the optimizer step after it, as with torch.autocast.

// autocastKey is the autograd.Local key of a goroutine's autocast region.
type autocastKey struct{}

// autocastRegion is one goroutine's innermost Autocast: its dtype and the
// rounded copies of the parameters' storages that its products read.
type autocastRegion struct {
	dt    DType               // BFloat16 or Float16; Float32 switches autocast off
	cache map[Storage]Storage // a leaf's storage → its rounded copy (nil: marked, not rounded yet)
}

// Autocast runs f with automatic mixed precision in dt on the calling
// goroutine, like torch.autocast("cpu", dtype=torch.bfloat16) (or
// torch.autocast("cuda", …)): the products of f's tensors on the CPU or
// a CUDA device take operands rounded to dt (BFloat16 or Float16) and sum
// them in float32, and the rest of f computes in float32
// (see the package documentation's section on mixed precision).
// Autocast(Float32, f) switches it off inside f, like
// torch.autocast(enabled=False).
// Operations on other goroutines, including those that f starts, are not
// affected. Calls nest: an inner region of the outer's dtype shares its
// rounded parameters. Autocast panics with an *Error if dt is not a
// floating-point dtype.
func Autocast(dt DType, f func()) {
	if dt != Float32 && !is16(dt) {
		panicf("Autocast", "want BFloat16, Float16 or Float32 (off), got %s", dt)
	}
	if r := currentAutocast(); r == nil && dt == Float32 || r != nil && r.dt == dt {
		f() // nothing to switch
		return
	}
	r := &autocastRegion{dt: dt}
	if is16(dt) {
		r.cache = map[Storage]Storage{}
	}
	autograd.WithLocal(autocastKey{}, r, f)
}

// AutocastDType returns the dtype of the calling goroutine's autocast
// region and whether one is on (torch.is_autocast_enabled and
// torch.get_autocast_cpu_dtype): Float32 and false outside Autocast or
// inside Autocast(Float32, …).
func AutocastDType() (DType, bool) {
	if r := currentAutocast(); r != nil && is16(r.dt) {
		return r.dt, true
	}
	return Float32, false
}

// currentAutocast returns the calling goroutine's innermost region, or
// nil (one atomic load while no goroutine is inside Autocast).
func currentAutocast() *autocastRegion {
	r, _ := autograd.Local(autocastKey{}).(*autocastRegion)
	return r
}

// autocastFor returns the calling goroutine's region when it is on and
// applies to the operands: floating-point tensors on a backend with
// 16-bit storages (Backend16: the CPU's, and CUDA's, whose MatMul
// multiplies two bfloat16 or float16 operands with float32 sums into a
// float32 result through cublasGemmEx); on other backends the product is
// left as it is.
func autocastFor(ts ...*Tensor) *autocastRegion {
	r := currentAutocast()
	if r == nil || !is16(r.dt) {
		return nil
	}
	for _, t := range ts {
		if !has16(t.backend) || !t.DType().IsFloatingPoint() {
			return nil
		}
	}
	return r
}

// autocastNoteView marks the storage of a parameter (a leaf that requires
// a gradient) that a view is taken of inside a region, so that a product
// reading the view (Linear's Wᵀ) uses the parameter's rounded copy rather
// than rounding the view each time.
func autocastNoteView(t *Tensor) {
	if !t.requiresGrad || !t.IsLeaf() {
		return
	}
	if r := autocastFor(t); r != nil {
		if _, ok := r.cache[t.storage]; !ok {
			r.cache[t.storage] = nil
		}
	}
}

// operand returns x rounded to the region's dtype, not recorded: x itself
// (detached) when it has the dtype already; a view of the region's rounded
// copy of the storage when x is a parameter or a view of one (the copy is
// made on first use); otherwise a fresh rounded copy.
func (r *autocastRegion) operand(x *Tensor) *Tensor {
	if x.DType() == r.dt {
		return x.Detach()
	}
	if x.requiresGrad && x.IsLeaf() {
		if _, ok := r.cache[x.storage]; !ok {
			r.cache[x.storage] = nil
		}
	}
	c, marked := r.cache[x.storage]
	if !marked {
		return r.round(x)
	}
	if c == nil {
		n := x.storage.Len()
		ct := emptyOut("Autocast", x.backend, r.dt, []int{n}) // written in full below
		escape(ct)                                            // the region's, not the Scope's it is made in
		c = ct.storage
		if !roundInto(c, x.storage, 0, n) {
			flat := contiguousLayout([]int{n})
			x.backend.Copy(c, flat, x.storage, flat)
		}
		r.cache[x.storage] = c
	}
	return newTensor(x.backend, c, x.Layout())
}

// round returns x rounded to the region's dtype, not recorded: in one pass
// over its block of storage, keeping x's strides, when x is a CPU float32
// tensor whose elements fill a block without gaps (a contiguous tensor or
// a permutation of one, such as a transposed matrix); else (another
// layout, another backend) as ToDType rounds, into a contiguous tensor.
func (r *autocastRegion) round(x *Tensor) *Tensor {
	n := x.Numel()
	_, onCPU := x.backend.(cpuBackend)
	if onCPU && r.dt == BFloat16 && x.DType() == Float32 && n > 0 {
		if !denseBlock(x.layout) {
			x = x.Detach().Contiguous()
		}
		c := emptyOut("Autocast", x.backend, r.dt, []int{n}).storage // written in full below
		if roundInto(c, x.storage, x.layout.Offset, n) {
			return newTensor(x.backend, c, Layout{Shape: cloneInts(x.layout.Shape), Strides: cloneInts(x.layout.Strides)})
		}
	}
	return x.Detach().ToDType(r.dt)
}

// denseBlock reports whether l's elements are exactly the positions
// Offset … Offset+numel−1, each once: its dims of size > 1, sorted by
// stride, nest like a contiguous tensor's.
func denseBlock(l Layout) bool {
	type dim struct{ size, stride int }
	ds := make([]dim, 0, len(l.Shape))
	for i, sz := range l.Shape {
		if sz > 1 {
			if l.Strides[i] <= 0 {
				return false
			}
			ds = append(ds, dim{sz, l.Strides[i]})
		}
	}
	slices.SortFunc(ds, func(a, b dim) int { return a.stride - b.stride })
	want := 1
	for _, d := range ds {
		if d.stride != want {
			return false
		}
		want *= d.size
	}
	return true
}

// roundInto writes the bfloat16 values of src's float32 elements
// off … off+n−1 into the BFloat16 CPU storage dst (n elements), as the
// cast does; it reports false, writing nothing, for other storages.
func roundInto(dst, src Storage, off, n int) bool {
	d, ok1 := dst.(*cpuStorage)
	s, ok2 := src.(*cpuStorage)
	if !ok1 || !ok2 || d.dt != BFloat16 || s.dt != Float32 {
		return false
	}
	roundBF16(d.live().h[:n], s.live().f[off:off+n])
	return true
}

// roundBF16 writes BF16FromFloat32 of each element of src into dst (of
// src's length), in the vector kernels where the processor has them: the
// rounding of every product's operands is a pass over them.
func roundBF16(dst []uint16, src []float32) { kernels.RoundBF16Bits(dst, src) }

// matmul is the product of a and b (at least two dims each) inside the
// region: 16-bit operands, float32 sums and a float32 result; the
// gradients, float32, come from products of the 16-bit operands and the
// output's gradient rounded to the region's dtype.
func (r *autocastRegion) matmul(a, b *Tensor, origA, origB []int) *Tensor {
	a16, b16 := r.productOperand(a), r.productOperand(b) // autocast_product.go
	out := r.product(a16, b16, origA, origB)
	record("MatMul", out, []*Tensor{a, b}, func(g *Tensor) {
		g16 := r.gradOperand(g)
		if a.requiresGrad {
			var ga *Tensor
			if storedTransposed(a16.t) {
				ga = r.product(b16, g16.transpose(), b16.shape(), g16.shape()).Transpose(-1, -2)
			} else {
				ga = r.product(g16, b16.transpose(), g16.shape(), b16.shape())
			}
			a.accumulate(autocastGradAs(ga, a))
		}
		if b.requiresGrad {
			var gb *Tensor
			if storedTransposed(b16.t) {
				gb = r.product(g16.transpose(), a16, g16.shape(), a16.shape()).Transpose(-1, -2)
			} else {
				gb = r.product(a16.transpose(), g16, a16.shape(), g16.shape())
			}
			b.accumulate(autocastGradAs(gb, b))
		}
	})
	return out
}

// autocastGradAs returns the float32 gradient x of t summed over t's
// broadcast batch dims and in t's dtype.
func autocastGradAs(x, t *Tensor) *Tensor {
	if !slices.Equal(x.layout.Shape, t.layout.Shape) {
		x = x.sumTo(t.layout.Shape)
	}
	return x.ToDType(t.DType())
}

// autocastAttention reports whether the float32 fused attention kernels
// give way to their compositions, whose products then run in the calling
// goroutine's autocast region (on backends without RoundedAttention and
// RoundedGroupedAttention, and for CausalAttention of one query).
func autocastAttention(ts ...*Tensor) bool { return autocastFor(ts...) != nil }
