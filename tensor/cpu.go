package tensor

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/wickml/wick/internal/blas"
	"github.com/wickml/wick/internal/parallel"
)

// cpuStorage is host memory of one dtype, dt: the slice of that dtype (f
// for Float32, i for Int64, h's bit patterns for BFloat16 and Float16)
// holds the elements, until Release drops it and remembers how many there
// were in gone.
type cpuStorage struct {
	dt   DType
	f    []float32
	i    []int64
	h    []uint16
	gone *releasedStorage

	// pooled storages (pool.go) may return f to the free list, unless
	// pinned; handed records that they did. escaped storages are not
	// recycled by the tracker that allocated them; recycled ones were.
	handed   atomic.Bool
	pinned   atomic.Bool
	escaped  atomic.Bool
	pooled   bool
	recycled bool

	// owner is the tracker that noted the storage; gradRefs counts the
	// non-leaf gradients (gradBuf) viewing it during the backward pass
	// of owner, whose goroutine alone touches it (pool.go).
	owner    *tracker
	gradRefs int32
}

// releasedStorage is what a released cpuStorage held.
type releasedStorage struct {
	n int
}

func (s *cpuStorage) Device() Device { return CPU }
func (s *cpuStorage) DType() DType   { return s.dt }
func (s *cpuStorage) Len() int {
	switch {
	case s.gone != nil:
		return s.gone.n
	case s.dt == Int64:
		return len(s.i)
	case is16(s.dt):
		return len(s.h)
	}
	return len(s.f)
}

// Release drops the storage's buffer, so that it can be reused (pool.go) or
// reclaimed even while tensors still view the storage; the kernels panic
// on it from then on (live). Releasing twice does nothing more.
func (s *cpuStorage) Release() { s.release() }

// live panics with an *Error naming the operation when s was released.
func (s *cpuStorage) live() *cpuStorage {
	if s.gone != nil && s.recycled {
		panic(&Error{Op: callerOp(), Msg: fmt.Sprintf("use of a %s storage of %d elements on cpu whose memory was reused: a temporary of a backward pass or of a Scope was kept beyond it", s.dt, s.gone.n)})
	}
	if s.gone != nil {
		panic(&Error{Op: callerOp(), Msg: fmt.Sprintf("use of a released %s storage of %d elements on cpu (Tensor.Release was called on a tensor viewing it)", s.dt, s.gone.n)})
	}
	return s
}

// callerOp returns the outermost function of package tensor on the stack,
// such as "Tensor.Add": the operation the caller called.
func callerOp() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	const pkg = "github.com/wickml/wick/tensor."
	op := "Tensor"
	for {
		f, more := frames.Next()
		if name, ok := strings.CutPrefix(f.Function, pkg); ok && !strings.Contains(name, "/") {
			op = name
		} else if op != "Tensor" {
			break
		}
		if !more {
			break
		}
	}
	op = strings.NewReplacer("(*", "", ")", "").Replace(op)
	if i := strings.Index(op, ".func"); i >= 0 {
		op = op[:i]
	}
	return op
}

// cpuBackend is the pure-Go reference backend.
type cpuBackend struct{}

var cpu Backend = cpuBackend{}

func (cpuBackend) Device() Device { return CPU }

func (cpuBackend) Alloc(dt DType, n int) Storage {
	switch dt {
	case Float32:
		return pooledF32(n, true)
	case Int64:
		return &cpuStorage{dt: Int64, i: make([]int64, n)}
	case BFloat16, Float16:
		return pooledH16(dt, n, true)
	}
	panic(&Error{Op: callerOp(), Msg: fmt.Sprintf("the cpu backend cannot allocate %s", dt)})
}

func (cpuBackend) FromFloat32s(data []float32) Storage {
	s := pooledF32(len(data), false)
	copy(s.f, data)
	return s
}

func (cpuBackend) FromInt64s(data []int64) Storage {
	return &cpuStorage{dt: Int64, i: append(make([]int64, 0, len(data)), data...)}
}

// fs and is return the elements of a Float32 and an Int64 storage; they
// panic with an *Error naming the caller's op for a storage of another
// dtype (a BFloat16 or Float16 tensor given to an op that has no kernel
// for it yet).
func fs(s Storage) []float32 {
	c := s.(*cpuStorage).live()
	if c.dt != Float32 {
		panic(&Error{Op: callerOp(), Msg: fmt.Sprintf("not implemented for %s tensors on cpu (want float32)", c.dt)})
	}
	return c.f
}

func is(s Storage) []int64 {
	c := s.(*cpuStorage).live()
	if c.dt != Int64 {
		panic(&Error{Op: callerOp(), Msg: fmt.Sprintf("not implemented for %s tensors on cpu (want int64)", c.dt)})
	}
	return c.i
}

// get returns a reader of the storage's elements as float32 (Int64
// converted as float32(v)).
func (s *cpuStorage) get() func(i int) float32 {
	switch s.dt {
	case Float32:
		return func(i int) float32 { return s.f[i] }
	case Int64:
		return func(i int) float32 { return float32(s.i[i]) }
	}
	to := halfOf(s.dt).to
	return func(i int) float32 { return to(s.h[i]) }
}

// set returns a writer of the storage's elements from float32 (rounded to
// nearest even for the 16-bit dtypes, as ToInt64 for Int64).
func (s *cpuStorage) set() func(i int, v float32) {
	switch s.dt {
	case Float32:
		return func(i int, v float32) { s.f[i] = v }
	case Int64:
		return func(i int, v float32) { s.i[i] = ToInt64(float64(v)) }
	}
	from := halfOf(s.dt).from
	return func(i int, v float32) { s.h[i] = from(v) }
}

func (b cpuBackend) Float32s(s Storage, l Layout) []float32 {
	out := make([]float32, l.Numel())
	b.Copy(&cpuStorage{dt: Float32, f: out}, contiguousLayout(l.Shape), s, l)
	return out
}

func (b cpuBackend) Int64s(s Storage, l Layout) []int64 {
	out := make([]int64, l.Numel())
	if len(out) == 0 {
		return out
	}
	b.Copy(&cpuStorage{dt: Int64, i: out}, contiguousLayout(l.Shape), s, l)
	return out
}

func (b cpuBackend) Copy(dst Storage, dl Layout, src Storage, sl Layout) {
	d, s := dst.(*cpuStorage).live(), src.(*cpuStorage).live()
	if d == s && dl.Overlaps(sl) {
		// overlapping views of one storage: read src in full first
		if slices.Equal(dl.Shape, sl.Shape) && slices.Equal(dl.Strides, sl.Strides) && dl.Offset == sl.Offset {
			return // each element onto itself
		}
		tmp := b.Alloc(s.DType(), numel(sl.Shape))
		tl := Layout{Shape: sl.Shape, Strides: ContiguousStrides(sl.Shape)}
		b.Copy(tmp, tl, src, sl)
		b.Copy(dst, dl, tmp, tl)
		return
	}
	p := newPlan(dl.Shape, []int{dl.Offset, sl.Offset}, dl.Strides, sl.Strides)
	switch {
	case d.dt == Float32 && s.dt == Float32:
		p.run(func(o []int, n int) {
			dd, ds, ss := d.f[o[0]:], p.inner[0], p.inner[1]
			sv := s.f[o[1]:]
			if ds == 1 && ss == 1 {
				copy(dd[:n], sv[:n])
				return
			}
			for k := range n {
				dd[k*ds] = sv[k*ss]
			}
		})
	case d.dt == Int64 && s.dt == Int64:
		p.run(func(o []int, n int) {
			for k := range n {
				d.i[o[0]+k*p.inner[0]] = s.i[o[1]+k*p.inner[1]]
			}
		})
	case d.dt == s.dt: // BFloat16 or Float16: the bit patterns, NaN payloads kept
		p.run(func(o []int, n int) {
			for k := range n {
				d.h[o[0]+k*p.inner[0]] = s.h[o[1]+k*p.inner[1]]
			}
		})
	case d.dt == Float32 && s.dt == Int64:
		p.run(func(o []int, n int) {
			for k := range n {
				d.f[o[0]+k*p.inner[0]] = float32(s.i[o[1]+k*p.inner[1]])
			}
		})
	case d.dt == Int64 && s.dt == Float32:
		p.run(func(o []int, n int) {
			for k := range n {
				d.i[o[0]+k*p.inner[0]] = ToInt64(float64(s.f[o[1]+k*p.inner[1]]))
			}
		})
	case d.dt == Float32 && s.dt == BFloat16: // exact; rows in the blas kernel
		p.run(func(o []int, n int) {
			dd, ds, ss := d.f[o[0]:], p.inner[0], p.inner[1]
			sv := s.h[o[1]:]
			if ds == 1 && ss == 1 {
				blas.WidenBF16(dd[:n], sv[:n])
				return
			}
			for k := range n {
				dd[k*ds] = BF16ToFloat32(sv[k*ss])
			}
		})
	default: // to or from a 16-bit dtype, through float32
		get, set := s.get(), d.set()
		p.run(func(o []int, n int) {
			for k := range n {
				set(o[0]+k*p.inner[0], get(o[1]+k*p.inner[1]))
			}
		})
	}
}

func (cpuBackend) Fill(dst Storage, dl Layout, v float64) {
	d := dst.(*cpuStorage).live()
	p := newPlan(dl.Shape, []int{dl.Offset}, dl.Strides)
	p.run(func(o []int, n int) {
		st := p.inner[0]
		if d.dt == Float32 {
			f := float32(v)
			for k := range n {
				d.f[o[0]+k*st] = f
			}
			return
		}
		if is16(d.dt) {
			h := halfOf(d.dt).from(float32(v))
			for k := range n {
				d.h[o[0]+k*st] = h
			}
			return
		}
		iv := ToInt64(v)
		for k := range n {
			d.i[o[0]+k*st] = iv
		}
	})
}

// plan iterates over the elements of a shape for several operands at once,
// in row-major order of the shape, one contiguous run (a "row" of the
// collapsed shape) or part of one at a time. Large iterations are split
// across goroutines.
type plan struct {
	shape   []int   // collapsed shape
	strides [][]int // per operand, collapsed
	offs    []int   // per operand base offsets
	inner   []int   // per operand stride of the last collapsed dim
	n       int     // length of the last collapsed dim
	total   int
}

func newPlan(shape []int, offs []int, strides ...[]int) *plan {
	cs, cst := Collapse(shape, strides...)
	p := &plan{shape: cs, strides: cst, offs: offs, n: cs[len(cs)-1], total: numel(shape)}
	p.inner = make([]int, len(strides))
	for j := range strides {
		p.inner[j] = cst[j][len(cs)-1]
	}
	return p
}

// grain is the number of elements below which work is not split.
const grain = 1 << 15

// run calls fn(offsets, n) for consecutive runs of n elements; offsets[j]
// is operand j's offset of the run's first element. fn may be called from
// several goroutines at once for disjoint runs.
func (p *plan) run(fn func(offs []int, n int)) {
	if p.total == 0 {
		return
	}
	parallelFor(p.total, grain, func(lo, hi int) {
		outer := len(p.shape) - 1
		idx := make([]int, outer)
		offs := make([]int, len(p.offs))
		r, c := lo/p.n, lo%p.n
		for d := outer - 1; d >= 0; d-- {
			idx[d] = r % p.shape[d]
			r /= p.shape[d]
		}
		for j := range offs {
			o := p.offs[j] + c*p.inner[j]
			for d := range outer {
				o += idx[d] * p.strides[j][d]
			}
			offs[j] = o
		}
		for pos := lo; pos < hi; {
			cnt := min(p.n-c, hi-pos)
			fn(offs, cnt)
			pos += cnt
			if pos >= hi {
				break
			}
			// advance to the start of the next row
			for j := range offs {
				offs[j] -= c * p.inner[j]
			}
			c = 0
			for d := outer - 1; d >= 0; d-- {
				idx[d]++
				for j := range offs {
					offs[j] += p.strides[j][d]
				}
				if idx[d] < p.shape[d] {
					break
				}
				for j := range offs {
					offs[j] -= idx[d] * p.strides[j][d]
				}
				idx[d] = 0
			}
		}
	})
}

// parallelFor splits [0, n) into chunks of at least minChunk and runs fn on
// each, on the shared worker pool (package internal/parallel: no goroutine
// is started per call; at most parallel.Workers() run at once).
func parallelFor(n, minChunk int, fn func(lo, hi int)) {
	parallel.For(n, minChunk, fn)
}
